import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConnectionDetails, CreatedBackup, Database, Drill } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { eventuallyDefined } from '@pgcloud/testing';
import type { KubernetesStandIn } from '@pgcloud/kube-stand-in';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { MARKERS_TABLE_SQL, markersIn } from '../support/markers.js';
import type { KubernetesStack } from '../support/kubernetes-stack.js';
import { DATABASES_NAMESPACE, startKubernetesStack } from '../support/kubernetes-stack.js';

/**
 * Rotation, resizes and restore drills on the kubernetes driver, against the stand-ins
 * (support/kubernetes-stack.ts): the new password in the role Secret and on the server;
 * a new size in the Cluster's resources, parameters and volume request; a drill as a Job
 * of pgcloud's image whose data is thrown away.
 */
describe('credentials, resizes and drills on the kubernetes driver (stand-ins)', () => {
  let k8s: KubernetesStack;
  let standIn: KubernetesStandIn;
  let owner: SignedIn;
  let connection: ConnectionDetails;
  let path = '';

  before(async () => {
    k8s = await startKubernetesStack(`k8s-drills-${process.pid}`);
    ({ standIn, owner } = k8s);
    ({ connection } = await runningDatabase(owner.api, k8s.project.id, 'orders'));
    path = `/projects/${k8s.project.id}/databases/orders`;
    await psql(connection.connection_string, MARKERS_TABLE_SQL);
    await psql(connection.connection_string, 'INSERT INTO markers (k) VALUES (0), (1)');
  });

  after(async () => {
    await k8s?.stop();
  });

  it('rotates the password: in the role Secret and on the server, the old one refused', async () => {
    const rotated = expectData<ConnectionDetails>(
      await owner.api.post(`${path}/credentials/rotate`),
      200,
    );
    const old = await psql(connection.connection_string, 'SELECT 1').then(
      () => 'it logged in',
      (err: Error & { stderr?: string }) => err.stderr ?? err.message,
    );
    assert.match(old, /password authentication failed/);
    connection = rotated;
    assert.deepEqual((await markersIn(connection.connection_string)).slice(0, 2), [0, 1]);
  });

  it("resizes: the Cluster's resources, settings and volume request change; never smaller", async () => {
    const refused = expectError(
      await owner.api.patch(path, { config: { storage: 5 } }),
      409,
      'STORAGE_IN_USE',
    );
    assert.match(refused.message, /can only grow/);
    const resizing = expectData<Database>(
      await owner.api.patch(path, { config: { cpu: 2, memory: 2, storage: 20 } }),
      200,
    );
    assert.equal(resizing.status, 'resizing');
    const running = await waitForStatus(owner.api, k8s.project.id, 'orders', ['running'], 90_000);
    assert.deepEqual(running.config, { cpu: 2, memory: 2, storage: 20 });
    const clusters = standIn.api.objects('Cluster', DATABASES_NAMESPACE) as unknown as {
      spec: {
        resources: unknown;
        storage: { size: string };
        postgresql: { parameters: Record<string, string> };
      };
    }[];
    assert.equal(clusters.length, 1);
    const { spec } = clusters[0];
    const size = { cpu: '2000m', memory: '2048Mi' };
    assert.deepEqual(spec.resources, { requests: size, limits: size });
    assert.equal(spec.storage.size, '24Gi', '20 GiB and the WAL headroom');
    assert.equal(spec.postgresql.parameters['shared_buffers'], '512MB');
    assert.equal(await psql(connection.connection_string, 'SHOW shared_buffers'), '512MB');
    assert.deepEqual((await markersIn(connection.connection_string)).slice(0, 2), [0, 1]);
  });

  it('drills in a Job whose data is thrown away: every check passes, and the Job goes', async () => {
    const made = expectData<CreatedBackup>(await owner.api.post(`${path}/backups`), 201);
    assert.equal((await waitForBackup(owner.api, `${path}/backups`, made.id)).status, 'completed');
    const created = expectData<Drill>(await owner.api.post(`${path}/drills`), 201);
    const drill = await eventuallyDefined(
      'the drill ended',
      async () => {
        const found = expectData<Drill>(await owner.api.get(`${path}/drills/${created.id}`), 200);
        return found.status === 'passed' || found.status === 'failed' ? found : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(drill.status, 'passed', JSON.stringify(drill.checks));
    assert.deepEqual(
      drill.checks.map((check) => [check.name, check.passed]),
      [
        ['consistent', true],
        ['amcheck', true],
      ],
    );
    assert.equal(drill.backup_id, made.id);
    const kinds = ['Job', 'Secret', 'Pod'] as const;
    const left = kinds.flatMap((kind) =>
      standIn.api
        .objects(kind, DATABASES_NAMESPACE)
        .map((o) => o.metadata.name)
        .filter((name) => name.includes('-drill')),
    );
    assert.deepEqual(left, [], "nothing of the drill's Job is left");
    const database = expectData<Database>(await owner.api.get(path), 200);
    assert.equal(database.last_proven_restorable?.drill_id, drill.id);
  });
});
