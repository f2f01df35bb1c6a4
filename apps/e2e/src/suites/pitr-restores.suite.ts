import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  CreatedPitrRestore,
  Project,
  Restore,
  RestoreDryRun,
  RestorePoint,
} from '@pgcloud/contracts';
import { fromMicros } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { eventually } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import type { Marker } from '../support/markers.js';
import { upTo } from '../support/markers.js';
import { DRILL_MARKERS as MARKERS, PitrDrill } from '../support/pitr-drill.js';
import { recoveryWindow } from '../support/pitr.js';
import { waitForRestore } from '../support/restores.js';

const RANDOM_TARGETS = 5;

/**
 * The PITR drill (issue: exact restores), into new databases: markers about 100 ms apart,
 * each with the commit time the server stamped; a restore to any target brings back
 * exactly the markers committed at or before it. Restores in place, and the window that
 * starts anew after them: pitr-restores-in-place.suite.ts.
 */
describe('PITR restores: exactly what was committed up to the target', () => {
  let drill: PitrDrill;
  let owner: SignedIn;
  let project: Project;
  let markers: Marker[];
  const path = () => drill.path;
  const restoreCopy = (target: string | Record<string, string>) => drill.restoreCopy(target);
  const pointAndPosition = (first: number, pointName: string) =>
    drill.pointAndPosition(first, pointName);

  before(async () => {
    drill = await PitrDrill.start();
    ({ owner, project, markers } = drill);
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
});
