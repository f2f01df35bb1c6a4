import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StandInSecret } from './cnpg-cluster-fields.js';
import type { ContainerLocals } from './pod-env.js';
import { containerEnv, containerMounts, localValue } from './pod-env.js';

const locals: ContainerLocals = {
  mounts: [
    { mountPath: '/restore', dir: '/tmp/pod/volumes/data' },
    { mountPath: '/etc/pgcloud-restore/', dir: '/tmp/pod/volumes/input' },
    { mountPath: '/restore/deeper', dir: '/tmp/pod/volumes/deeper' },
  ],
  terminationPath: '/dev/termination-log',
  terminationFile: '/tmp/pod/termination/build',
  ports: new Map([[5432, 41234]]),
};

const secret = (values: Record<string, string>): StandInSecret => ({
  data: Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
});
const secrets = (name: string) =>
  name === 'restore' ? secret({ token: 't0k', 'ca.crt': 'PEM' }) : undefined;

describe('pod-env: a container environment made local', () => {
  it('rewrites mount paths (and paths under them), the termination path and ports', () => {
    assert.equal(localValue('/restore', locals), '/tmp/pod/volumes/data');
    assert.equal(localValue('/restore/', locals), '/tmp/pod/volumes/data/');
    assert.equal(localValue('/restore/data/x', locals), '/tmp/pod/volumes/data/data/x');
    assert.equal(localValue('/restore/deeper/y', locals), '/tmp/pod/volumes/deeper/y');
    assert.equal(localValue('/etc/pgcloud-restore', locals), '/tmp/pod/volumes/input');
    assert.equal(localValue('/dev/termination-log', locals), '/tmp/pod/termination/build');
    assert.equal(localValue('5432', locals), '41234');
  });

  it('keeps what names no mount or port', () => {
    for (const value of ['/restored', '/etc', '5433', 'restore', '', ' 5432'])
      assert.equal(localValue(value, locals), value);
  });

  it('builds env from values and Secrets, env over envFrom, all made local', () => {
    const env = containerEnv(
      {
        name: 'serve',
        envFrom: [{ secretRef: { name: 'restore' }, prefix: 'S_' }],
        env: [
          { name: 'RESTORE_DIR', value: '/restore' },
          { name: 'RESTORE_PORT', value: '5432' },
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'restore', key: 'token' } } },
          { name: 'S_token', value: 'from env' },
          { name: 'GONE', valueFrom: { secretKeyRef: { name: 'x', key: 'y', optional: true } } },
        ],
      },
      secrets,
      locals,
    );
    assert.deepEqual(env, {
      S_token: 'from env',
      'S_ca.crt': 'PEM',
      RESTORE_DIR: '/tmp/pod/volumes/data',
      RESTORE_PORT: '41234',
      TOKEN: 't0k',
    });
  });

  it('refuses a missing Secret or key that is not optional, and unknown mounts', () => {
    const missing = { name: 'A', valueFrom: { secretKeyRef: { name: 'restore', key: 'nope' } } };
    assert.throws(() => containerEnv({ name: 'c', env: [missing] }, secrets, locals), /no key/);
    assert.throws(
      () => containerEnv({ name: 'c', envFrom: [{ secretRef: { name: 'x' } }] }, secrets, locals),
      /'x' not found/,
    );
    assert.throws(
      () =>
        containerMounts({ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/v' }] }, new Map()),
      /names no volume/,
    );
  });
});
