import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateObject } from '@pgcloud/kubernetes/validate';
import { buildCluster, buildRestoredCluster } from './cluster-object.js';
import {
  buildDrillJob,
  buildDrillSecret,
  buildRestoreJob,
  buildRestoreSecret,
  buildRestoreService,
  parseBuildOutcome,
  parseDrillOutcome,
  restoredSource,
} from './restore-objects.js';
import { caSecret, roleSecrets, tlsSecret } from './secret-objects.js';
import { clusterName, serverNames } from './server-names.js';
import { buildService } from './service-object.js';

const names = serverNames('srv_0123456789abcdefghij', 'pgcloud-databases');
const cluster = buildCluster({
  names,
  clusterName: clusterName(names, 1),
  databaseName: 'shop',
  config: { cpu: 0.5, memory: 1, storage: 10 },
  imageName: 'ghcr.io/cloudnative-pg/postgresql:15',
  storageClass: 'fast',
  readOnly: false,
});

describe('the objects the kubernetes driver builds', () => {
  it('meet their schemas: the CNPG Cluster the vendored one, the built-in kinds theirs', () => {
    const objects = [
      cluster,
      buildService(names, { port: 20001, type: 'LoadBalancer', clusterName: 'srv-x-g1' }),
      ...roleSecrets(names, { databaseName: 'shop', password: 'a', replicationPassword: 'b' }),
      tlsSecret(names, { certPem: 'crt', keyPem: 'key' }),
      tlsSecret(names, { certPem: 'crt', keyPem: 'key' }, names.replicationTlsSecret),
      caSecret(names, 'ca'),
    ];
    for (const object of objects) assert.deepEqual(validateObject(object), []);
  });

  it('would be refused with a field CNPG does not know', () => {
    const spec = cluster.spec as Record<string, unknown>;
    const wrong = { ...cluster, spec: { ...spec, backups: { enabled: false } } };
    const problems = validateObject(wrong);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0] ?? '', /backups/);
  });

  it('sizes the Cluster from the config and keeps passwords out as SCRAM verifiers', () => {
    const spec = cluster.spec as {
      resources: unknown;
      storage: unknown;
      postgresql: { parameters: Record<string, string> };
    };
    assert.deepEqual(spec.resources, {
      requests: { cpu: '500m', memory: '1024Mi' },
      limits: { cpu: '500m', memory: '1024Mi' },
    });
    assert.deepEqual(spec.storage, { size: '14Gi', storageClass: 'fast' });
    assert.equal(spec.postgresql.parameters.shared_buffers, '256MB');
    const [app] = roleSecrets(names, {
      databaseName: 'shop',
      password: 'plain-password',
      replicationPassword: 'other',
    });
    const data = (app as { data: Record<string, string> }).data;
    const password = Buffer.from(data.password ?? '', 'base64').toString('utf8');
    assert.match(password, /^SCRAM-SHA-256\$4096:/);
  });

  it('gives the superuser no password: TCP takes it by a certificate of the deployment CA', () => {
    const spec = cluster.spec as {
      enableSuperuserAccess: boolean;
      superuserSecret?: unknown;
      certificates: Record<string, string>;
      postgresql: { pg_hba: string[] };
    };
    assert.equal(spec.enableSuperuserAccess, false);
    assert.equal(spec.superuserSecret, undefined);
    assert.equal(spec.certificates['clientCASecret'], names.caSecret);
    assert.equal(spec.certificates['replicationTLSSecret'], names.replicationTlsSecret);
    // The first line naming the superuser decides: pg_hba.conf takes the first match.
    const first = spec.postgresql.pg_hba.find((line) => / postgres /.test(line));
    assert.equal(first, 'hostssl all postgres all cert');
  });
});

describe('the objects of a restore on Kubernetes', () => {
  const spec = {
    serverId: names.serverId,
    restoreId: 'rst_0123456789',
    archive: { url: 'https://s3.example/backup?X-Amz-Signature=secret', sha256: 'ab'.repeat(32) },
    archivedDatabaseName: 'shop',
    databaseName: 'shop',
    password: 'app-password',
    replicationPassword: 'replication-password',
  };

  it('meet their schemas: the Job, its Service and Secret, and the restored Cluster', () => {
    const restored = buildRestoredCluster(cluster, {
      names,
      clusterName: clusterName(names, 2),
      restoreId: spec.restoreId,
      source: restoredSource(names),
    });
    const objects = [
      buildRestoreJob(names, 'pgcloud:1'),
      buildRestoreService(names),
      buildRestoreSecret(names, spec, { certPem: 'crt', keyPem: 'key', caPem: 'ca' }),
      restored,
    ];
    for (const object of objects) assert.deepEqual(validateObject(object), []);
    const restoredSpec = restored.spec as Record<string, unknown>;
    assert.deepEqual(restoredSpec.replica, { enabled: true, source: 'restored' });
    assert.deepEqual(restoredSpec.bootstrap, { pg_basebackup: { source: 'restored' } });
    assert.deepEqual(restoredSpec.resources, (cluster.spec as Record<string, unknown>).resources);
  });

  it('keep the links and passwords out of the Job: they are in its Secret only', () => {
    const job = JSON.stringify(buildRestoreJob(names, 'pgcloud:1'));
    for (const secret of [spec.archive.url, spec.password, spec.replicationPassword])
      assert.ok(!job.includes(secret));
  });

  it('read the build outcome from its termination message, errors included', () => {
    const done = { walFilesApplied: 3, stepSeconds: { download: 1, recover: 2, check: 0.5 } };
    assert.deepEqual(parseBuildOutcome(JSON.stringify(done)), done);
    assert.deepEqual(parseBuildOutcome('{"error":"bad sum","corrupt":true}'), {
      error: 'bad sum',
      corrupt: true,
    });
    assert.deepEqual(parseBuildOutcome('tar: unexpected EOF\n'), {
      error: 'tar: unexpected EOF',
      corrupt: false,
    });
  });
});

describe("a drill's objects", () => {
  const input = {
    drillId: 'drl_0123456789abcdefghij',
    archive: { url: 'https://s3.example/backup?X-Amz-Signature=secret', sha256: 'ab'.repeat(32) },
    archivedDatabaseName: 'shop',
  };

  it('meet their schemas: a Job of the drill command, its links in the Secret only, no Service', () => {
    const job = buildDrillJob(names, 'pgcloud:1', input.drillId);
    const secret = buildDrillSecret(names, input, { certPem: 'crt', keyPem: 'key', caPem: 'ca' });
    for (const object of [job, secret]) assert.deepEqual(validateObject(object), []);
    const text = JSON.stringify(job);
    assert.ok(!text.includes(input.archive.url));
    assert.match(text, /restore-job\/main.js","drill"]/);
    assert.ok(!text.includes('containerPort'), 'nothing listens for others');
  });

  it('read the checks from the termination message, errors included', () => {
    const outcome = {
      checks: [{ name: 'consistent', passed: true, detail: 'ok' }],
      restoreSeconds: 2,
      walFilesApplied: 0,
    };
    assert.deepEqual(parseDrillOutcome(JSON.stringify(outcome)), outcome);
    assert.deepEqual(parseDrillOutcome('{"error":"no room","corrupt":false}'), {
      error: 'no room',
    });
    assert.deepEqual(parseDrillOutcome(''), { error: 'the drill ended without a word' });
  });
});
