import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseResourcePath } from './resource-paths.js';

describe('parseResourcePath', () => {
  const read = (path: string) => {
    const parsed = parseResourcePath(path);
    return parsed && [parsed.type.kind, parsed.namespace, parsed.name, parsed.status];
  };

  it('reads collections, objects and status in namespaces, across them and cluster-scoped', () => {
    assert.deepEqual(read('/api/v1/namespaces'), ['Namespace', undefined, undefined, false]);
    assert.deepEqual(read('/api/v1/namespaces/ns'), ['Namespace', undefined, 'ns', false]);
    assert.deepEqual(read('/api/v1/namespaces/ns/secrets'), ['Secret', 'ns', undefined, false]);
    assert.deepEqual(read('/api/v1/namespaces/ns/pods/p/status'), ['Pod', 'ns', 'p', true]);
    assert.deepEqual(read('/api/v1/pods'), ['Pod', undefined, undefined, false]);
    assert.deepEqual(read('/apis/batch/v1/namespaces/ns/jobs/j'), ['Job', 'ns', 'j', false]);
    assert.deepEqual(read('/apis/postgresql.cnpg.io/v1/clusters'), [
      'Cluster',
      undefined,
      undefined,
      false,
    ]);
    assert.deepEqual(read('/apis/postgresql.cnpg.io/v1/namespaces/n/clusters/c/status'), [
      'Cluster',
      'n',
      'c',
      true,
    ]);
  });

  it('refuses what is not served: secrets have no status, kinds stay in their group', () => {
    assert.equal(read('/api/v1/namespaces/ns/secrets/s/status'), undefined);
    assert.equal(read('/api/v1/namespaces/ns/jobs'), undefined);
    assert.equal(read('/apis/batch/v1/namespaces/ns/secrets'), undefined);
    assert.equal(read('/api/v1/secrets/s'), undefined);
    assert.equal(read('/apis/apps/v1/deployments'), undefined);
  });
});
