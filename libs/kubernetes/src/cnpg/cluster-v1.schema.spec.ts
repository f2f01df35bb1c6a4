import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterV1Schema, validateObject } from '../validate/index.js';
import type { CnpgCluster } from './cluster.types.js';

const NAME = 'Cluster/srv-abc123-g1';

/** A Cluster with every field pgcloud writes, and what the API server and operator add. */
function fullCluster(): CnpgCluster {
  return {
    apiVersion: 'postgresql.cnpg.io/v1',
    kind: 'Cluster',
    metadata: {
      name: 'srv-abc123-g1',
      namespace: 'pgcloud-eu-west',
      labels: { 'app.kubernetes.io/managed-by': 'pgcloud', 'pgcloud.dev/server-id': 'srv_abc123' },
      annotations: { 'cnpg.io/hibernation': 'off' },
      uid: '5b0e3f0c-1d2a-4c55-9a53-0d4c6f1f2a10',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2025-02-01T10:00:00Z',
      deletionTimestamp: '2025-02-02T10:00:00.123456Z',
      finalizers: ['cnpg.io/cluster'],
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          name: 'pgcloud-eu-west',
          uid: 'u-1',
          controller: false,
        },
      ],
      managedFields: [
        {
          manager: 'pgcloud',
          operation: 'Update',
          apiVersion: 'postgresql.cnpg.io/v1',
          time: '2025-02-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:instances': {} } },
        },
      ],
    },
    spec: {
      instances: 2,
      imageName: 'ghcr.io/cloudnative-pg/postgresql:15.10',
      primaryUpdateStrategy: 'unsupervised',
      enableSuperuserAccess: true,
      superuserSecret: { name: 'srv-abc123-superuser' },
      postgresql: {
        parameters: { max_connections: '100', default_transaction_read_only: 'off' },
        pg_hba: [
          'hostssl app app 0.0.0.0/0 scram-sha-256',
          'hostssl replication pgcloud_replication 0.0.0.0/0 scram-sha-256',
        ],
      },
      bootstrap: {
        initdb: {
          database: 'app',
          owner: 'app',
          secret: { name: 'srv-abc123-app' },
          dataChecksums: true,
          encoding: 'UTF8',
          localeCollate: 'C',
          localeCType: 'C',
        },
      },
      storage: { size: '10Gi', storageClass: 'standard' },
      resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
      certificates: { serverTLSSecret: 'srv-abc123-tls', serverCASecret: 'srv-abc123-ca' },
      managed: {
        roles: [
          {
            name: 'app',
            ensure: 'present',
            login: true,
            replication: false,
            superuser: false,
            inherit: true,
            connectionLimit: -1,
            passwordSecret: { name: 'srv-abc123-app' },
          },
          {
            name: 'pgcloud_replication',
            ensure: 'present',
            login: true,
            replication: true,
            passwordSecret: { name: 'srv-abc123-replication' },
          },
        ],
      },
    },
    status: {
      phase: 'Cluster in healthy state',
      instances: 2,
      readyInstances: 2,
      currentPrimary: 'srv-abc123-g1-1',
      writeService: 'srv-abc123-g1-rw',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'ClusterIsReady',
          message: 'Cluster is Ready',
          lastTransitionTime: '2025-02-01T10:01:00Z',
        },
      ],
    },
  };
}

/** The next generation of a restore: a copy, with pg_basebackup, of the restore Job's server. */
function restoredCluster(): CnpgCluster {
  const cluster = fullCluster();
  delete cluster.status;
  cluster.metadata = { name: 'srv-abc123-g2', namespace: 'pgcloud-eu-west' };
  cluster.spec.bootstrap = {
    pg_basebackup: {
      source: 'restore',
      database: 'app',
      owner: 'app',
      secret: { name: 'srv-abc123-app' },
    },
  };
  cluster.spec.externalClusters = [
    {
      name: 'restore',
      connectionParameters: { host: 'srv-abc123-restore', port: '5432', user: 'postgres' },
      password: { name: 'srv-abc123-superuser', key: 'password' },
      sslRootCert: { name: 'srv-abc123-ca', key: 'ca.crt' },
    },
  ];
  cluster.spec.replica = { enabled: true, source: 'restore' };
  return cluster;
}

/** A field to set (or to delete, with DELETE), by its path from the object's root. */
type Change = [path: string, value: unknown];
const DELETE = Symbol('delete');

/** The problems of fullCluster() after the changes. */
function problemsWith(...changes: Change[]): string[] {
  const cluster = structuredClone(fullCluster());
  for (const [path, value] of changes) {
    const keys = path.split('.');
    const last = keys.pop()!;
    let parent = cluster as unknown as Record<string, unknown>;
    for (const key of keys) parent = parent[key] as Record<string, unknown>;
    if (value === DELETE) delete parent[last];
    else parent[last] = value;
  }
  return validateObject(cluster);
}

describe('the vendored CNPG 1.25.1 Cluster schema', () => {
  it('accepts a Cluster with every field pgcloud writes, and a pg_basebackup one', () => {
    assert.deepEqual(validateObject(fullCluster()), []);
    assert.deepEqual(validateObject(restoredCluster()), []);
  });

  it('refuses an unknown field at the top of spec (CNPG backups stay off)', () => {
    assert.deepEqual(problemsWith(['spec.backup', { retentionPolicy: '30d' }]), [
      `${NAME}: /spec/backup is not a field of Cluster`,
    ]);
  });

  it('refuses an unknown nested field: pg_hab for pg_hba', () => {
    assert.deepEqual(
      problemsWith(
        ['spec.postgresql.pg_hab', ['hostssl all all 0.0.0.0/0 scram-sha-256']],
        ['spec.postgresql.pg_hba', DELETE],
      ),
      [
        `${NAME}: /spec/postgresql must have required property 'pg_hba'`,
        `${NAME}: /spec/postgresql/pg_hab is not a field of Cluster`,
      ],
    );
  });

  it('refuses a replica section without its source', () => {
    assert.deepEqual(problemsWith(['spec.replica', { enabled: true }]), [
      `${NAME}: /spec/replica must have required property 'source'`,
    ]);
  });

  it('refuses a wrong type: instances "2", and fewer than one instance', () => {
    assert.deepEqual(problemsWith(['spec.instances', '2']), [
      `${NAME}: /spec/instances must be integer`,
    ]);
    assert.deepEqual(problemsWith(['spec.instances', 0]), [
      `${NAME}: /spec/instances must be >= 1`,
    ]);
  });

  it('refuses values outside an enum', () => {
    assert.deepEqual(problemsWith(['spec.managed.roles.0.ensure', 'maybe']), [
      `${NAME}: /spec/managed/roles/0/ensure must be one of: present, absent`,
    ]);
    assert.deepEqual(problemsWith(['spec.primaryUpdateStrategy', 'automatic']), [
      `${NAME}: /spec/primaryUpdateStrategy must be one of: unsupervised, supervised`,
    ]);
  });

  it('refuses a size or resource that is not a Kubernetes quantity', () => {
    const quantity = 'must be a Kubernetes quantity (such as 500m, 2Gi or 10)';
    assert.deepEqual(problemsWith(['spec.storage.size', '10 GB']), [
      `${NAME}: /spec/storage/size ${quantity}`,
    ]);
    assert.deepEqual(problemsWith(['spec.resources.limits.memory', '1 gigabyte']), [
      `${NAME}: /spec/resources/limits/memory ${quantity}`,
    ]);
    assert.deepEqual(problemsWith(['spec.resources.requests.cpu', 2]), []);
  });

  it('refuses both bootstrap methods at once, and none', () => {
    const exactlyOne = `${NAME}: /spec/bootstrap must hold exactly one of initdb and pg_basebackup`;
    assert.deepEqual(problemsWith(['spec.bootstrap.pg_basebackup', { source: 'restore' }]), [
      exactlyOne,
    ]);
    assert.deepEqual(problemsWith(['spec.bootstrap', {}]), [exactlyOne]);
  });

  it('refuses missing required fields and a name CNPG would refuse', () => {
    assert.deepEqual(
      problemsWith(['spec.storage', DELETE], ['spec.managed.roles.1.passwordSecret', DELETE]),
      [
        `${NAME}: /spec must have required property 'storage'`,
        `${NAME}: /spec/managed/roles/1 must have required property 'passwordSecret'`,
      ],
    );
    assert.equal(problemsWith(['metadata.name', 'srv_abc123-g1']).length, 1);
    assert.equal(problemsWith(['metadata.name', `srv-${'a'.repeat(47)}`]).length, 1);
  });

  it('refuses unknown fields in metadata and status, and a bad condition', () => {
    assert.deepEqual(
      problemsWith(
        ['metadata.generateName', 'srv-'],
        ['status.primary', 'srv-abc123-g1-1'],
        ['status.conditions.0.status', 'true'],
      ),
      [
        `${NAME}: /metadata/generateName is not a field of Cluster`,
        `${NAME}: /status/primary is not a field of Cluster`,
        `${NAME}: /status/conditions/0/status must be one of: True, False, Unknown`,
      ],
    );
  });

  it('closes every object of the schema: maps and fieldsV1 aside, no unknown field passes', () => {
    const open: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (schema['type'] === 'object' && schema['additionalProperties'] !== false) {
        const map = typeof schema['additionalProperties'] === 'object';
        if (!map && !path.endsWith('/fieldsV1')) open.push(path);
      }
      for (const [key, child] of Object.entries(schema)) walk(child, `${path}/${key}`);
    };
    walk(clusterV1Schema, '#');
    assert.deepEqual(open, []);
  });
});
