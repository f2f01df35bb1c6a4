import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type {
  ConnectionDetails,
  CreatedBackup,
  CreatedPitrRestore,
  CreatedRestore,
  Database,
  Project,
} from '@pgcloud/contracts';
import { fromMicros } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { eventuallyDefined } from '@pgcloud/testing';
import type { KubernetesStandIn } from '@pgcloud/kube-stand-in';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { insertMarkers, markersIn, MARKERS_TABLE_SQL, upTo } from '../support/markers.js';
import { recoveryWindow, waitForArchive } from '../support/pitr.js';
import { waitForRestore } from '../support/restores.js';
import type { KubernetesStack } from '../support/kubernetes-stack.js';
import { DATABASES_NAMESPACE, startKubernetesStack } from '../support/kubernetes-stack.js';

/**
 * The whole stack with DATABASE_DRIVER=kubernetes, through the gateway, against STAND-INS
 * for Kubernetes and CloudNativePG (libs/kube-stand-in: an API server of the
 * test's, and an operator that runs a real local PostgreSQL server per Cluster and each
 * restore Job's containers as local processes). The data round trips are real.
 */
describe('databases on the kubernetes driver (stand-ins for Kubernetes and CNPG)', () => {
  let k8s: KubernetesStack;
  let standIn: KubernetesStandIn;
  let stack: Stack;
  let owner: SignedIn;
  let project: Project;
  let connection: ConnectionDetails;
  const path = () => `/projects/${project.id}/databases/orders`;

  before(async () => {
    k8s = await startKubernetesStack(`k8s-${process.pid}`);
    ({ standIn, stack, owner, project } = k8s);
  });

  after(async () => {
    await k8s?.stop();
  });

  it('creates a database as a CNPG Cluster behind its Service: running, and psql round trips', async () => {
    ({ connection } = await runningDatabase(owner.api, project.id, 'orders'));
    const clusters = standIn.api.objects('Cluster', DATABASES_NAMESPACE);
    assert.equal(clusters.length, 1, 'one Cluster');
    await psql(connection.connection_string, MARKERS_TABLE_SQL);
    await psql(connection.connection_string, 'INSERT INTO markers (k) VALUES (0)');
    assert.deepEqual(await markersIn(connection.connection_string), [0]);
  });

  it('takes a backup, and a restore whose archive fails its check leaves the old Cluster serving', async () => {
    const backups = `${path()}/backups`;
    const created = expectData<CreatedBackup>(await owner.api.post(backups), 201);
    const backup = await waitForBackup(owner.api, backups, created.id);
    assert.ok((backup.size_bytes ?? 0) > 0);

    const bucket = stack.bucket();
    try {
      const database = expectData<Database>(await owner.api.get(path()), 200);
      const key = `projects/${project.id}/databases/${database.id}/base/${backup.id}.tar.zst`;
      const bytes = Buffer.concat(await (await bucket.getStream(key)).toArray());
      const middle = Math.floor(bytes.length / 2);
      bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
      await bucket.uploadStream(key, Readable.from([bytes]));
    } finally {
      bucket.close();
    }
    const clustersBefore = clusterNames();
    const restore = expectData<CreatedRestore>(
      await owner.api.post(`${backups}/${backup.id}/restore`),
      201,
    );
    const failed = await waitForRestore(owner.api, path(), restore.restore_id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error ?? '', /corrupt/);
    await waitForStatus(owner.api, project.id, 'orders', ['running']);
    assert.deepEqual(clusterNames(), clustersBefore, 'the old Cluster serves, no other is left');
    assert.deepEqual(standIn.api.objects('Job', DATABASES_NAMESPACE), [], 'no restore Job left');
    await psql(connection.connection_string, 'INSERT INTO markers (k) VALUES (1)');
    assert.deepEqual(await markersIn(connection.connection_string), [0, 1]);
  });

  it('restores to a point in time in place: a new Cluster with exactly the markers before the target', async () => {
    const pitr = `${path()}/pitr`;
    expectData(await owner.api.post(`${pitr}/enable`, { retention_days: 2 }), 200);
    await waitForArchive(owner.api, pitr);
    const markers = await insertMarkers(connection.connection_string, 2, 11);
    const last = markers.at(-1)?.committed.micros ?? 0n;
    await eventuallyDefined('the window covers the last marker', async () => {
      const window = await recoveryWindow(owner.api, pitr);
      return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
    });
    const at = markers[4]; // marker 6
    assert.ok(at);
    const clustersBefore = clusterNames();
    const created = expectData<CreatedPitrRestore>(
      await owner.api.post(`${pitr}/restore`, {
        target_time: fromMicros(at.committed.micros + 1000n).iso,
      }),
      201,
    );
    const restore = await waitForRestore(owner.api, path(), created.restore_id);
    assert.equal(restore.status, 'completed', restore.error);
    assert.ok((restore.wal_files_applied ?? 0) >= 1);
    await waitForStatus(owner.api, project.id, 'orders', ['running']);
    assert.deepEqual(await markersIn(connection.connection_string), [0, 1, ...upTo(6, 2)]);
    const clustersAfter = clusterNames();
    assert.equal(clustersAfter.length, 1, 'the old Cluster is gone');
    assert.notDeepEqual(clustersAfter, clustersBefore, 'a new generation serves');
    await psql(connection.connection_string, 'INSERT INTO markers (k) VALUES (100)');
  });

  it('deletes the database: its Cluster, Service and Secrets go', async () => {
    expectData(await owner.api.delete(path()), 200);
    await eventuallyDefined('the objects gone', () =>
      Promise.resolve(
        clusterNames().length === 0 &&
          standIn.api.objects('Service', DATABASES_NAMESPACE).length === 0 &&
          standIn.api.objects('Secret', DATABASES_NAMESPACE).length === 0
          ? true
          : undefined,
      ),
    );
  });

  function clusterNames(): string[] {
    return standIn.api
      .objects('Cluster', DATABASES_NAMESPACE)
      .map((object) => object.metadata.name)
      .sort();
  }
});
