import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { primarySelector, pgcloudLabels } from './labels.js';
import { clusterName, kubeName, parseClusterName, secretNames, serviceName } from './names.js';

describe('kubeName', () => {
  it('turns a server id into the base of its Kubernetes names', () => {
    assert.equal(kubeName('srv_abc123'), 'srv-abc123');
    assert.equal(kubeName('srv_aaaaaaaaaaaaaaaaaaaa'), 'srv-aaaaaaaaaaaaaaaaaaaa');
    assert.equal(serviceName('srv_abc123'), 'srv-abc123');
  });

  it('refuses anything that is not srv_ and lowercase letters and digits', () => {
    for (const id of [
      '',
      'srv_',
      'srv-abc',
      'srv_ABC',
      'srv_a_b',
      'srv_a-b',
      'db_abc',
      ' srv_abc',
      'srv_abc\n',
      'srv_ab.c',
    ])
      assert.throws(() => kubeName(id), /is not a server id/, JSON.stringify(id));
  });
});

describe('clusterName', () => {
  it('is <base>-g<generation>, from generation 1', () => {
    assert.equal(clusterName('srv_abc', 1), 'srv-abc-g1');
    assert.equal(clusterName('srv_abc', 12), 'srv-abc-g12');
  });

  it('refuses a generation that is not an integer from 1, and a bad server id', () => {
    for (const generation of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      assert.throws(() => clusterName('srv_abc', generation), /generation/, String(generation));
    assert.throws(() => clusterName('srv-abc', 1), /is not a server id/);
  });

  it('refuses a name longer than CNPG allows (50)', () => {
    const id = `srv_${'a'.repeat(43)}`; // srv-<43>-g1 is 50 characters
    assert.equal(clusterName(id, 1).length, 50);
    assert.throws(() => clusterName(id, 10), /longer than CNPG's 50/);
  });

  it('is read back by parseClusterName, which ignores other names', () => {
    assert.deepEqual(parseClusterName(clusterName('srv_abc', 7)), {
      base: 'srv-abc',
      generation: 7,
    });
    for (const name of ['srv-abc', 'srv-abc-g0', 'srv-abc-g01', 'srv-abc-gx', 'other-g1'])
      assert.equal(parseClusterName(name), undefined, name);
  });
});

describe('secretNames', () => {
  it('names the five Secrets of a server after its base', () => {
    assert.deepEqual(secretNames('srv_abc'), {
      app: 'srv-abc-app',
      replication: 'srv-abc-replication',
      replicationTls: 'srv-abc-replication-tls',
      tls: 'srv-abc-tls',
      ca: 'srv-abc-ca',
    });
    assert.throws(() => secretNames('abc'), /is not a server id/);
  });
});

describe('labels', () => {
  it('marks pgcloud objects and selects the primary of one generation', () => {
    assert.deepEqual(pgcloudLabels('srv_abc'), {
      'app.kubernetes.io/managed-by': 'pgcloud',
      'pgcloud.dev/server-id': 'srv_abc',
    });
    assert.deepEqual(primarySelector('srv-abc-g2'), {
      'cnpg.io/cluster': 'srv-abc-g2',
      'cnpg.io/instanceRole': 'primary',
    });
  });
});
