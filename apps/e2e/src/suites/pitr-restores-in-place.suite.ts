import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  ConnectionDetails,
  CreatedPitrRestore,
  Database,
  PitrConfig,
  Project,
  RestorePoint,
} from '@pgcloud/contracts';
import { fromMicros } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { eventuallyDefined } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { waitForStatus } from '../support/databases.js';
import type { Marker } from '../support/markers.js';
import { insertMarkers, markersIn, upTo } from '../support/markers.js';
import { PitrDrill } from '../support/pitr-drill.js';
import { recoveryWindow } from '../support/pitr.js';
import { waitForRestore } from '../support/restores.js';

/**
 * The PITR drill in place: a restore of the database itself, to a time, `latest` or a
 * backup, brings back exactly what was committed up to the target on the same URL, and
 * the recovery window then starts anew on a new timeline, as exact as before.
 */
describe('PITR restores in place: exact, then a new window on a new timeline', () => {
  let drill: PitrDrill;
  let owner: SignedIn;
  let project: Project;
  let connection: ConnectionDetails;
  let markers: Marker[];
  const path = () => drill.path;
  const restoreCopy = (target: string | Record<string, string>) => drill.restoreCopy(target);
  const pointAndPosition = (first: number, pointName: string) =>
    drill.pointAndPosition(first, pointName);
  let database: Database;

  before(async () => {
    drill = await PitrDrill.start();
    ({ owner, project, connection, markers, database } = drill);
    // A restore point on the first timeline, which the new one must not offer.
    const { point }: { point: RestorePoint } = await pointAndPosition(41, 'before-42');
    assert.equal(point.name, 'before-42');
  });

  it('restores in place exactly, then the window starts anew and a restore into it is exact too', async () => {
    const k = 20;
    const [at, next] = [markers[k - 1], markers[k]];
    assert.ok(at && next);
    const target = fromMicros(at.committed.micros + 1000n).iso;
    const before = expectData<PitrConfig>(await owner.api.get(`${path()}/pitr/config`), 200);
    const created = expectData<CreatedPitrRestore>(
      await owner.api.post(`${path()}/pitr/restore`, { target_time: target }),
      201,
    );
    const restoring = await waitForStatus(owner.api, project.id, 'drill', ['restoring', 'running']);
    assert.equal(restoring.status, 'restoring');
    const status = await eventuallyDefined(
      'the receiver stops while the restore runs',
      async () => {
        const current = expectData<{ status: string }>(
          await owner.api.get(`${path()}/pitr/receiver-status`),
          200,
        );
        return current.status === 'stopped' ? current : undefined;
      },
    );
    assert.equal(status.status, 'stopped');
    const restore = await waitForRestore(owner.api, path(), created.restore_id);
    assert.equal(restore.status, 'completed', restore.error);
    await waitForStatus(owner.api, project.id, 'drill', ['running']);
    assert.deepEqual(
      await markersIn(connection.connection_string),
      upTo(k),
      'same URL, exact data',
    );

    const after = await eventuallyDefined(
      'a fresh base backup and window',
      async () => {
        const config = expectData<PitrConfig>(await owner.api.get(`${path()}/pitr/config`), 200);
        return config.base_backup_id !== before.base_backup_id && config.recovery_window
          ? config
          : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.ok(
      Date.parse(after.recovery_window?.from ?? '') > Date.parse(restore.completed_at ?? ''),
      'the new window begins after the restore',
    );
    const more = await insertMarkers(connection.connection_string, 101, 110);
    await eventuallyDefined('the new window covers the new markers', async () => {
      const window = await recoveryWindow(owner.api, `${path()}/pitr`);
      const last = more.at(-1)?.committed.micros ?? 0n;
      return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
    });
    const m = more[4];
    const n = more[5];
    assert.ok(m && n);
    const between = fromMicros((m.committed.micros + n.committed.micros) / 2n).iso;
    assert.deepEqual((await restoreCopy(between)).markers, [...upTo(k), ...upTo(105, 101)]);
  });

  it('starts the window anew after an in-place restore of a backup too', async () => {
    const before = expectData<PitrConfig>(await owner.api.get(`${path()}/pitr/config`), 200);
    const baseId = before.base_backup_id ?? '';
    const created = expectData<{ restore_id: string }>(
      await owner.api.post(`${path()}/backups/${baseId}/restore`),
      201,
    );
    const restore = await waitForRestore(owner.api, path(), created.restore_id);
    assert.equal(restore.status, 'completed', restore.error);
    assert.deepEqual(
      await markersIn(connection.connection_string),
      upTo(20),
      'the backup holds 1..20',
    );
    const after = await eventuallyDefined(
      'a fresh base backup and window',
      async () => {
        const config = expectData<PitrConfig>(await owner.api.get(`${path()}/pitr/config`), 200);
        return config.base_backup_id !== baseId && config.recovery_window ? config : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.ok(
      Date.parse(after.recovery_window?.from ?? '') > Date.parse(restore.completed_at ?? ''),
    );
    const more = await insertMarkers(connection.connection_string, 201, 204);
    await eventuallyDefined('the window covers them', async () => {
      const window = await recoveryWindow(owner.api, `${path()}/pitr`);
      const last = more.at(-1)?.committed.micros ?? 0n;
      return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
    });
    const second = more[1];
    assert.ok(second);
    assert.deepEqual((await restoreCopy(second.committed.iso)).markers, [...upTo(20), 201, 202]);
    assert.equal(database.name, 'drill');
  });

  it('restores to restore points and WAL positions on the new timeline, whose archive starts with none', async () => {
    const fresh = expectData<{ restore_points: RestorePoint[] }>(
      await owner.api.get(`${path()}/pitr/restore-points`),
      200,
    );
    assert.deepEqual(fresh.restore_points, [], "the old archive's points are not offered");
    const { lsn } = await pointAndPosition(211, 'before-212');
    const earlier = [...upTo(20), ...upTo(204, 201)];
    const toPoint = await restoreCopy({ target_restore_point: 'before-212' });
    assert.deepEqual(toPoint.markers, [...earlier, 211]);
    assert.deepEqual((await restoreCopy({ target_lsn: lsn })).markers, [...earlier, 211, 212]);
  });

  it('restores `latest` in place: everything committed before the request, the last commit just before', async () => {
    // The server is put on hold as the restore is accepted: what it committed until then,
    // up to the moment before, must all come back.
    await insertMarkers(connection.connection_string, 301, 301, 0);
    const created = expectData<CreatedPitrRestore>(
      await owner.api.post(`${path()}/pitr/restore`, { target_time: 'latest' }),
      201,
    );
    const restore = await waitForRestore(owner.api, path(), created.restore_id);
    assert.equal(restore.status, 'completed', restore.error);
    await waitForStatus(owner.api, project.id, 'drill', ['running']);
    assert.deepEqual(await markersIn(connection.connection_string), [
      ...upTo(20),
      ...upTo(204, 201),
      ...upTo(213, 211),
      301,
    ]);
  });
});
