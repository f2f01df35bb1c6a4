import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProgressFields } from './restore-progress.js';
import { RestoreTracker } from './restore-progress.js';
import type { RestoreEntity } from './restore.entity.js';

const FRESH = {
  phase: 'queued',
  bytesDone: 0,
  bytesTotal: 0,
  walFilesDone: 0,
  walFilesTotal: 0,
  etaSeconds: null,
} as RestoreEntity;

/** A tracker on a clock the spec moves, and the writes it made. */
function tracked(record: RestoreEntity = FRESH, writeEveryMs?: number) {
  const clock = { ms: 0 };
  const writes: ProgressFields[] = [];
  const failures: unknown[] = [];
  let failNext = false;
  const write = (fields: ProgressFields) => {
    if (failNext) return ((failNext = false), Promise.reject(new Error('db down')));
    writes.push(fields);
    return Promise.resolve();
  };
  const tracker = new RestoreTracker(
    record,
    write,
    (e) => failures.push(e),
    () => clock.ms,
    writeEveryMs,
  );
  return { tracker, clock, writes, failures, failWrite: () => (failNext = true) };
}

describe('RestoreTracker', () => {
  it('writes a phase at once and the bytes of a download once a second at most', async () => {
    const { tracker, clock, writes } = tracked();
    await tracker.totals(4096, 0);
    const build = tracker.build();
    build.step('download');
    build.downloaded(100);
    clock.ms = 500;
    build.downloaded(200);
    clock.ms = 1000;
    build.downloaded(300);
    clock.ms = 1100;
    build.downloaded(4096);
    build.step('recover');
    await tracker.flush();

    assert.deepEqual(
      writes.map((w) => `${w.phase} ${w.bytesDone}/${w.bytesTotal}`),
      [
        'queued 0/4096',
        'downloading 0/4096',
        'downloading 300/4096',
        'replaying 4096/4096',
        'replaying 4096/4096',
      ],
    );
  });

  it('writes as often as RESTORE_PROGRESS_INTERVAL_MS says, estimating after half of it', async () => {
    const { tracker, clock, writes } = tracked(FRESH, 100);
    await tracker.totals(4000, 0);
    const build = tracker.build();
    build.step('download');
    clock.ms = 40;
    build.downloaded(400);
    clock.ms = 100;
    build.downloaded(1000);
    clock.ms = 200;
    build.downloaded(2000);
    await tracker.flush();

    assert.deepEqual(
      writes.map((w) => `${w.phase} ${w.bytesDone} ${w.etaSeconds}`),
      [
        'queued 0 null',
        'downloading 0 null',
        'downloading 1000 1',
        'downloading 2000 1',
        'downloading 2000 1',
      ],
    );
  });

  it('never goes back: not to an earlier phase, not to fewer bytes (a retried attempt)', async () => {
    const shown = { ...FRESH, phase: 'replaying', bytesDone: 4096, bytesTotal: 4096 };
    const { tracker, writes } = tracked(shown as RestoreEntity);
    const build = tracker.build();
    build.step('download');
    build.downloaded(10);
    build.step('recover');
    build.step('check');
    await tracker.flush();

    assert.deepEqual(
      writes.map((w) => `${w.phase} ${w.bytesDone}`),
      ['replaying 4096', 'replaying 4096', 'checking 4096', 'checking 4096'],
    );
  });

  it('estimates what is left of the download and of the replay at the rates measured', async () => {
    const { tracker, clock, writes } = tracked();
    await tracker.totals(10_000, 20);
    const build = tracker.build();
    build.step('download');
    clock.ms = 200;
    build.downloaded(100); // too soon to measure
    clock.ms = 1000;
    build.downloaded(2500); // 2.5 bytes/ms: 7500 left, 3 s
    clock.ms = 2000;
    build.downloaded(10_000);
    build.step('recover'); // a new phase: no rate yet
    clock.ms = 3000;
    build.replayed(4); // 4 segments/s: 16 left, 4 s
    clock.ms = 4000;
    build.replayed(25); // never shown beyond the plan's count before replay ends
    build.step('check');
    await tracker.flush();
    await tracker.phase('done');

    assert.deepEqual(
      writes.map(
        (w) => `${w.phase} ${w.bytesDone} ${w.walFilesDone}/${w.walFilesTotal} ${w.etaSeconds}`,
      ),
      [
        'queued 0 0/20 null',
        'downloading 0 0/20 null',
        'downloading 2500 0/20 3',
        'downloading 10000 0/20 0',
        'replaying 10000 0/20 null',
        'replaying 10000 4/20 4',
        'replaying 10000 20/20 0',
        'checking 10000 20/20 null',
        'checking 10000 20/20 null',
        'done 10000 20/20 0',
      ],
    );
  });

  it('counts every planned segment through once replay ended', async () => {
    const { tracker, writes } = tracked();
    await tracker.totals(10, 5);
    await tracker.replayed(3);
    assert.deepEqual(writes.at(-1)?.walFilesDone, 5);
    assert.deepEqual(writes.at(-1)?.walFilesTotal, 5);
    await tracker.replayed(8);
    assert.deepEqual([writes.at(-1)?.walFilesDone, writes.at(-1)?.walFilesTotal], [8, 8]);
  });

  it('tells a failed write and goes on with the next one', async () => {
    const { tracker, writes, failures, failWrite } = tracked();
    failWrite();
    await tracker.phase('downloading');
    await tracker.phase('replaying');

    assert.equal(failures.length, 1);
    assert.deepEqual(
      writes.map((w) => w.phase),
      ['replaying'],
    );
  });
});
