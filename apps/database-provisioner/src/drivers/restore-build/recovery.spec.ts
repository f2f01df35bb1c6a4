import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { postgresTime, recoveryTargetOption, watchReplay } from './recovery.js';
import { spoolFiles } from './wal-spool.js';

describe('recovery targets', () => {
  it('sets the one recovery_target_* setting each kind of target needs', () => {
    assert.equal(
      recoveryTargetOption({ time: '2026-11-24T07:00:00.123456Z' }),
      '-c "recovery_target_time=2026-11-24 07:00:00.123456+00:00"',
    );
    assert.equal(recoveryTargetOption({ lsn: '0/3000148' }), '-c recovery_target_lsn=0/3000148');
    assert.equal(
      recoveryTargetOption({ restorePoint: 'before-migration_2' }),
      '-c recovery_target_name=before-migration_2',
    );
  });

  it('refuses a restore point name that would need quoting', () => {
    for (const name of ['a b', 'x"; DROP', "it's", ''])
      assert.throws(() => recoveryTargetOption({ restorePoint: name }), /database name rules/);
  });

  it('writes times with a numeric offset', () => {
    assert.equal(postgresTime('2026-01-01T00:00:00.000001Z'), '2026-01-01 00:00:00.000001+00:00');
  });

  it('reports the planned segments the server fetched, less the one it replays', async (t) => {
    const spool = await mkdtemp(join(tmpdir(), 'pgcloud-replay-'));
    t.after(() => rm(spool, { recursive: true, force: true }));
    const planned = [
      '000000010000000000000003',
      '000000010000000000000004',
      '000000010000000000000005',
    ];
    const reports: number[] = [];
    const stop = watchReplay(spool, planned, (n) => reports.push(n), 20);
    await sleep(60);
    assert.deepEqual(reports, [], 'nothing fetched, nothing told');
    // History files and segments outside the plan do not count; a fetch noted twice once.
    await appendFile(
      spoolFiles(spool).replayLog,
      `00000002.history\n${planned[0]}\n${planned[1]}\n${planned[1]}\n`,
    );
    await sleep(60);
    stop();
    assert.equal(reports.at(-1), 1);
  });
});
