import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  ConnectionDetails,
  CreatedPitrRestore,
  Database,
  PitrConfig,
  Project,
  Restore,
  RestoreDryRun,
  RestorePoint,
} from '@pgcloud/contracts';
import { fromMicros } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { signIn, eventually, eventuallyDefined } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { runningDatabase, waitForStatus } from '../support/databases.js';
import type { Marker } from '../support/markers.js';
import { MARKERS_TABLE_SQL, insertMarkers, markersIn, upTo } from '../support/markers.js';
import { recoveryWindow, waitForArchive } from '../support/pitr.js';
import { assertWatchedToDone, waitForRestore, watchRestore } from '../support/restores.js';
import { psql } from '../support/databases.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

const MARKERS = 30;
const RANDOM_TARGETS = 5;

/**
 * The PITR drill (issue: exact restores): markers about 100 ms apart, each with the commit
 * time the server stamped; a restore to any target brings back exactly the markers
 * committed at or before it.
 */
describe('PITR restores: exactly what was committed up to the target', () => {
  let owner: SignedIn;
  let project: Project;
  let database: Database;
  let connection: ConnectionDetails;
  let markers: Marker[];
  let copies = 0;
  const path = () => `/projects/${project.id}/databases/drill`;

  /**
   * Restores into a new database and answers the markers it holds: to a time, or to the
   * target a body gives (target_lsn, target_restore_point).
   */
  const restoreCopy = async (
    target: string | Record<string, string>,
  ): Promise<{ restore: Restore; markers: number[] }> => {
    copies++;
    const name = `drill-copy-${copies}`;
    const created = expectData<CreatedPitrRestore>(
      await owner.api.post(`${path()}/pitr/restore`, {
        ...(typeof target === 'string' ? { target_time: target } : target),
        target_database: name,
      }),
      201,
    );
    assert.equal(created.status, 'pending');
    assert.equal(created.target_database, name);
    // Read every 300 ms: phases in order to `done`, numbers never going back.
    const seen = await watchRestore(owner.api, path(), created.restore_id);
    assertWatchedToDone(seen);
    const restore = seen.at(-1)!;
    assert.equal(restore.kind, 'pitr');
    assert.ok(restore.progress.wal_files_total >= 1, 'the plan had WAL to replay');
    assert.ok(restore.progress.wal_files_done >= (restore.wal_files_applied ?? 0));
    assert.equal(restore.target_time, created.target_time);
    assert.equal(restore.target_lsn, created.target_lsn);
    assert.equal(restore.target_restore_point, created.target_restore_point);
    assert.ok((restore.wal_files_applied ?? 0) >= 1, 'segments were replayed');
    const copy = expectData<ConnectionDetails>(
      await owner.api.get(`/projects/${project.id}/databases/${name}/url`),
      200,
    );
    const found = await markersIn(copy.connection_string);
    expectData(await owner.api.delete(`/projects/${project.id}/databases/${name}`), 200);
    return { restore, markers: found };
  };

  before(async () => {
    const stack = await sharedStack();
    const login = uniqueLogin('driller');
    await signIn(await newClient(), login);
    await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
    owner = await signIn(await newClient(), login);
    project = expectData<Project>(await owner.api.post('/projects', { name: 'drills' }), 201);
    ({ database, connection } = await runningDatabase(owner.api, project.id, 'drill'));
    await psql(connection.connection_string, MARKERS_TABLE_SQL);
    expectData(await owner.api.post(`${path()}/pitr/enable`, { retention_days: 2 }), 200);
    await waitForArchive(owner.api, `${path()}/pitr`);
    markers = await insertMarkers(connection.connection_string, 1, MARKERS);
    const last = markers.at(-1)?.committed.micros ?? 0n;
    await eventuallyDefined('the window covers the last marker', async () => {
      const window = await recoveryWindow(owner.api, `${path()}/pitr`);
      return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
    });
  });

  it('restores to targets between markers: exactly the markers before each', async () => {
    for (let i = 0; i < RANDOM_TARGETS; i++) {
      const k = 1 + Math.floor(Math.random() * (MARKERS - 1)); // 1..MARKERS-1
      const [at, next] = [markers[k - 1], markers[k]];
      assert.ok(at && next);
      const between = fromMicros(
        at.committed.micros + (next.committed.micros - at.committed.micros) / 2n,
      );
      const { markers: found } = await restoreCopy(between.iso);
      assert.deepEqual(found, upTo(k), `target ${between.iso}, between markers ${k} and ${k + 1}`);
    }
  });

  it('includes a marker committed exactly at the target, and not one a microsecond later', async () => {
    const k = 12;
    const marker = markers[k - 1];
    assert.ok(marker);
    assert.deepEqual((await restoreCopy(marker.committed.iso)).markers, upTo(k));
    const before = fromMicros(marker.committed.micros - 1n).iso;
    assert.deepEqual((await restoreCopy(before)).markers, upTo(k - 1));
  });

  it('restores `latest` and a target after the last commit of an idle database', async () => {
    const latest = await restoreCopy('latest');
    assert.deepEqual(latest.markers, upTo(MARKERS));
    // Idle since the last marker: `to` moves on past it with the primary's clock.
    const lastMarker = markers.at(-1)?.committed.micros ?? 0n;
    const target = await eventually(async () => {
      const window = await recoveryWindow(owner.api, `${path()}/pitr`);
      const to = fromMicros(BigInt(Date.parse(window.to ?? '')) * 1000n);
      assert.ok(to.micros > lastMarker + 1_000_000n, 'the target is well after the last commit');
      return to;
    });
    assert.deepEqual((await restoreCopy(target.iso)).markers, upTo(MARKERS));
  });

  it('refuses targets outside the window (422), malformed ones (400) and a second restore (409)', async () => {
    const window = await recoveryWindow(owner.api, `${path()}/pitr`);
    const from = BigInt(Date.parse(window.from ?? '')) * 1000n;
    const to = BigInt(Date.parse(window.to ?? '')) * 1000n;
    for (const target of [
      fromMicros(from - 1_000_000n).iso,
      fromMicros(to + 60_000_000n).iso,
      new Date(Date.now() + 3600_000).toISOString(),
    ])
      expectError(
        await owner.api.post(`${path()}/pitr/restore`, { target_time: target }),
        422,
        'TARGET_TIME_INVALID',
      );
    for (const body of [
      {},
      { target_time: 'yesterday' },
      { target_time: '2026-11-22 10:00:00' },
      { target_time: '2026-11-22T10:00:00.1234567Z' },
      { target_time: 12 },
      { target_time: 'latest', target_database: 'Bad Name' },
    ])
      expectError(await owner.api.post(`${path()}/pitr/restore`, body), 400, 'VALIDATION_ERROR');
    const first = expectData<CreatedPitrRestore>(
      await owner.api.post(`${path()}/pitr/restore`, {
        target_time: 'latest',
        target_database: 'drill-busy',
      }),
      201,
    );
    expectError(
      await owner.api.post(`${path()}/pitr/restore`, { target_time: 'latest' }),
      409,
      'OPERATION_IN_PROGRESS',
    );
    const done = await waitForRestore(owner.api, path(), first.restore_id);
    assert.equal(done.status, 'completed', done.error);
    expectData(await owner.api.delete(`/projects/${project.id}/databases/drill-busy`), 200);
  });

  it('lists PITR restores under pitr/restores, and in the database restores list', async () => {
    const { restores } = expectData<{ restores: Restore[] }>(
      await owner.api.get(`${path()}/pitr/restores`),
      200,
    );
    assert.ok(restores.length >= RANDOM_TARGETS + 4);
    for (const restore of restores) {
      assert.equal(restore.kind, 'pitr');
      assert.ok(restore.status !== 'completed' || restore.phase === 'done', restore.phase);
      assert.match(restore.target_time ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    }
    const one = restores[0];
    assert.ok(one);
    assert.deepEqual(
      expectData<Restore>(await owner.api.get(`${path()}/pitr/restores/${one.id}`), 200),
      one,
    );
    expectError(
      await owner.api.get(`${path()}/pitr/restores/rstr_00000000000000000000`),
      404,
      'RESTORE_NOT_FOUND',
    );
    const all = expectData<{ restores: Restore[] }>(await owner.api.get(`${path()}/restores`), 200);
    assert.ok(all.restores.some((r) => r.id === one.id));
  });

  /** The PITR restores of the drill database. */
  const pitrRestores = async (): Promise<Restore[]> =>
    expectData<{ restores: Restore[] }>(await owner.api.get(`${path()}/pitr/restores`), 200)
      .restores;

  /**
   * Commits marker `first`, makes a restore point, commits `first + 1`, reads the WAL
   * position, commits `first + 2`, and waits until the archive holds them all.
   */
  const pointAndPosition = async (
    first: number,
    pointName: string,
  ): Promise<{ point: RestorePoint; lsn: string }> => {
    await insertMarkers(connection.connection_string, first, first, 0);
    const point = expectData<RestorePoint>(
      await owner.api.post(`${path()}/pitr/restore-points`, { name: pointName }),
      201,
    );
    assert.equal(point.name, pointName);
    assert.match(point.lsn, /^[0-9A-F]+\/[0-9A-F]+$/);
    await insertMarkers(connection.connection_string, first + 1, first + 1, 0);
    const lsn = await psql(connection.connection_string, 'SELECT pg_current_wal_insert_lsn()');
    const after = await insertMarkers(connection.connection_string, first + 2, first + 2, 0);
    const last = after.at(-1)?.committed.micros ?? 0n;
    await eventuallyDefined('the window covers the markers', async () => {
      const window = await recoveryWindow(owner.api, `${path()}/pitr`);
      return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
    });
    return { point, lsn };
  };

  it('restores to a restore point and to a WAL position: the marker just before, not the one after', async () => {
    const { point, lsn } = await pointAndPosition(41, 'before-42');
    // Dry runs first: the plans, and nothing created.
    const restoresBefore = await pitrRestores();
    const planFor = async (target: Record<string, string>) =>
      expectData<RestoreDryRun>(
        await owner.api.post(`${path()}/pitr/restore?dry_run=true`, {
          ...target,
          target_database: 'drill-dry',
        }),
        200,
      ).plan;
    const pointPlan = await planFor({ target_restore_point: 'before-42' });
    const lsnPlan = await planFor({ target_lsn: lsn });
    assert.deepEqual(await pitrRestores(), restoresBefore, 'a dry run records no restore');
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/drill-dry`),
      404,
      'DATABASE_NOT_FOUND',
    );
    assert.equal(lsnPlan.kind, 'pitr');
    assert.equal(lsnPlan.target_lsn, lsn);
    assert.ok(lsnPlan.wal_bytes > 0 && lsnPlan.estimated_seconds > 0);

    const toPoint = await restoreCopy({ target_restore_point: 'before-42' });
    assert.deepEqual(toPoint.markers, [...upTo(MARKERS), 41]);
    assert.equal(toPoint.restore.target_restore_point, 'before-42');
    assert.equal(pointPlan.wal_files, toPoint.restore.wal_files_applied, 'the plan foresaw it');
    const toLsn = await restoreCopy({ target_lsn: lsn });
    assert.deepEqual(toLsn.markers, [...upTo(MARKERS), 41, 42]);
    assert.equal(toLsn.restore.target_lsn, lsn);
    assert.equal(lsnPlan.wal_files, toLsn.restore.wal_files_applied, 'the plan foresaw it');
    const listed = expectData<{ restore_points: RestorePoint[] }>(
      await owner.api.get(`${path()}/pitr/restore-points`),
      200,
    );
    assert.deepEqual(listed.restore_points, [point]);

    expectError(
      await owner.api.post(`${path()}/pitr/restore-points`, { name: 'before-42' }),
      400,
      'VALIDATION_ERROR',
    );
    for (const body of [{}, { name: 'Bad Name' }, { name: 'x', extra: 1 }])
      expectError(
        await owner.api.post(`${path()}/pitr/restore-points`, body),
        400,
        'VALIDATION_ERROR',
      );
    for (const body of [
      { target_lsn: lsn, target_time: 'latest' },
      { target_lsn: lsn, target_restore_point: 'before-42' },
      { target_lsn: 'G/0' },
      { target_lsn: '0-1' },
      { target_restore_point: 'Bad Name' },
    ])
      expectError(await owner.api.post(`${path()}/pitr/restore`, body), 400, 'VALIDATION_ERROR');
    for (const body of [
      { target_lsn: '0/0' },
      { target_lsn: 'FFFFFFFF/0' },
      { target_restore_point: 'no-such-point' },
    ])
      for (const query of ['', '?dry_run=true'])
        expectError(
          await owner.api.post(`${path()}/pitr/restore${query}`, body),
          422,
          'TARGET_TIME_INVALID',
        );
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
