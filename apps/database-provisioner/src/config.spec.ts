import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '@pgcloud/config';
import { loadConfig as loadWith } from './config.js';

/** The object store every deployment names (S3_ENDPOINT), beside the settings of a case. */
const STORE = { S3_ENDPOINT: 'http://127.0.0.1:7480' };
const loadConfig = (env: Record<string, string>, podNamespace: () => string | undefined) =>
  loadWith({ ...STORE, ...env }, podNamespace);

const KUBERNETES = {
  DATABASE_DRIVER: 'kubernetes',
  KUBERNETES_NAMESPACES: 'eu-west=pgcloud-databases, us-east = pgcloud-us',
  PGCLOUD_IMAGE: 'registry.example.com/pgcloud:0.1.0',
};
const inPod = (): string | undefined => 'pgcloud';
const outsidePods = () => undefined;

/** Asserts that loading fails, naming exactly these settings. */
function refuses(env: Record<string, string>, names: string[], podNamespace = inPod): void {
  assert.throws(
    () => loadConfig(env, podNamespace),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.deepEqual(err.problems.map((p) => /^[A-Z_0-9]+/.exec(p)?.[0]).sort(), names.sort());
      return true;
    },
  );
}

describe('database-provisioner config: the object store', () => {
  it('needs S3_ENDPOINT, an http(s) URL, and keeps it', () => {
    assert.equal(loadConfig({}, inPod).S3_ENDPOINT, 'http://127.0.0.1:7480');
    refuses({ S3_ENDPOINT: '' }, ['S3_ENDPOINT']);
    refuses({ S3_ENDPOINT: 'ftp://store' }, ['S3_ENDPOINT']);
  });
});

describe('database-provisioner config: the driver', () => {
  it('selects the local driver by default, with no kubernetes settings', () => {
    const config = loadConfig({}, inPod);
    assert.equal(config.DATABASE_DRIVER, 'local');
    assert.equal(config.KUBERNETES_CA_NAMESPACE, undefined, 'not read from the pod');
  });

  it('reads the kubernetes settings, with their defaults', () => {
    const config = loadConfig(KUBERNETES, inPod);
    assert.equal(config.DATABASE_DRIVER, 'kubernetes');
    assert.deepEqual(config.kubernetesNamespaces, {
      'eu-west': 'pgcloud-databases',
      'us-east': 'pgcloud-us',
    });
    assert.equal(config.KUBERNETES_CA_NAMESPACE, 'pgcloud', 'the pod’s own namespace');
    assert.equal(config.KUBERNETES_SERVICE_TYPE, 'ClusterIP');
    assert.equal(config.KUBERNETES_POSTGRES_IMAGE, 'ghcr.io/cloudnative-pg/postgresql:15');
    assert.equal(config.KUBERNETES_STORAGE_CLASS, undefined);
    assert.equal(config.KUBERNETES_READY_TIMEOUT_SECONDS, 600);
    assert.equal(config.KUBERNETES_RESTORE_TIMEOUT_SECONDS, 21_600);
    assert.equal(config.PGCLOUD_IMAGE, 'registry.example.com/pgcloud:0.1.0');
  });

  it('takes every kubernetes setting given', () => {
    const config = loadConfig(
      {
        ...KUBERNETES,
        KUBERNETES_CA_NAMESPACE: 'pgcloud-system',
        KUBERNETES_SERVICE_TYPE: 'LoadBalancer',
        KUBERNETES_POSTGRES_IMAGE: 'ghcr.io/cloudnative-pg/postgresql:15.8',
        KUBERNETES_STORAGE_CLASS: 'fast-ssd',
        KUBERNETES_READY_TIMEOUT_SECONDS: '300',
        KUBERNETES_RESTORE_TIMEOUT_SECONDS: '3600',
      },
      outsidePods,
    );
    assert.equal(config.KUBERNETES_CA_NAMESPACE, 'pgcloud-system');
    assert.equal(config.KUBERNETES_SERVICE_TYPE, 'LoadBalancer');
    assert.equal(config.KUBERNETES_POSTGRES_IMAGE, 'ghcr.io/cloudnative-pg/postgresql:15.8');
    assert.equal(config.KUBERNETES_STORAGE_CLASS, 'fast-ssd');
    assert.equal(config.KUBERNETES_READY_TIMEOUT_SECONDS, 300);
    assert.equal(config.KUBERNETES_RESTORE_TIMEOUT_SECONDS, 3600);
  });

  it('needs KUBERNETES_NAMESPACES and PGCLOUD_IMAGE with the kubernetes driver', () => {
    refuses({ DATABASE_DRIVER: 'kubernetes' }, ['KUBERNETES_NAMESPACES', 'PGCLOUD_IMAGE']);
  });

  it('needs KUBERNETES_CA_NAMESPACE outside a pod', () => {
    refuses(KUBERNETES, ['KUBERNETES_CA_NAMESPACE'], outsidePods);
  });

  it('refuses a namespace list that is not region=namespace pairs, or names a region twice', () => {
    for (const bad of [
      'pgcloud-databases',
      'eu-west=',
      'eu-west=Pgcloud',
      'eu-west=pgcloud_databases',
      'EU=pgcloud',
      'eu-west=a,,us-east=b',
      `eu-west=${'n'.repeat(64)}`,
      'eu-west=a=b',
    ])
      refuses({ ...KUBERNETES, KUBERNETES_NAMESPACES: bad }, ['KUBERNETES_NAMESPACES']);
    assert.throws(
      () => loadConfig({ ...KUBERNETES, KUBERNETES_NAMESPACES: 'eu-west=a,eu-west=b' }, inPod),
      (err: unknown) =>
        err instanceof ConfigError && /eu-west named more than once/.test(err.problems[0] ?? ''),
    );
  });

  it('refuses bad kubernetes values, naming each', () => {
    refuses({ ...KUBERNETES, KUBERNETES_SERVICE_TYPE: 'NodePort' }, ['KUBERNETES_SERVICE_TYPE']);
    refuses({ ...KUBERNETES, KUBERNETES_CA_NAMESPACE: 'Pgcloud' }, ['KUBERNETES_CA_NAMESPACE']);
    refuses({ ...KUBERNETES, KUBERNETES_STORAGE_CLASS: 'Fast SSD' }, ['KUBERNETES_STORAGE_CLASS']);
    for (const bad of ['0', '-1', '1.5', 'ten'])
      refuses(
        {
          ...KUBERNETES,
          KUBERNETES_READY_TIMEOUT_SECONDS: bad,
          KUBERNETES_RESTORE_TIMEOUT_SECONDS: bad,
        },
        ['KUBERNETES_READY_TIMEOUT_SECONDS', 'KUBERNETES_RESTORE_TIMEOUT_SECONDS'],
      );
  });

  it('refuses the kubernetes settings with the local driver, naming each', () => {
    refuses({ KUBERNETES_NAMESPACES: 'eu-west=pgcloud-databases' }, ['KUBERNETES_NAMESPACES']);
    refuses(
      {
        DATABASE_DRIVER: 'local',
        KUBERNETES_SERVICE_TYPE: 'ClusterIP',
        KUBERNETES_READY_TIMEOUT_SECONDS: '600',
        PGCLOUD_IMAGE: 'pgcloud',
      },
      ['KUBERNETES_SERVICE_TYPE', 'KUBERNETES_READY_TIMEOUT_SECONDS', 'PGCLOUD_IMAGE'],
    );
    // An empty value is an unset one, as everywhere in validateEnv.
    assert.equal(loadConfig({ KUBERNETES_NAMESPACES: '' }, inPod).DATABASE_DRIVER, 'local');
  });

  it('ignores the local driver’s settings with the kubernetes driver', () => {
    const config = loadConfig(
      { ...KUBERNETES, PG_OS_USER: 'postgres', DATABASE_HOST: 'db.example.com' },
      inPod,
    );
    assert.equal(config.DATABASE_DRIVER, 'kubernetes');
  });

  it('refuses a driver it does not know', () => {
    refuses({ DATABASE_DRIVER: 'docker' }, ['DATABASE_DRIVER']);
  });
});
