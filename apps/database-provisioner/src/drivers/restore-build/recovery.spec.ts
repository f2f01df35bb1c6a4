import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@pgcloud/testing';
import {
  checkedRecoveryTarget,
  postgresTime,
  recover,
  recoveryTargetSettings,
  watchReplay,
} from './recovery.js';
import { spoolFiles } from './wal-spool.js';

describe('recovery targets', () => {
  it('sets the one recovery_target_* setting each kind of target needs', () => {
    assert.deepEqual(recoveryTargetSettings({ time: '2026-11-24T07:00:00.123456Z' }), {
      recovery_target_time: '2026-11-24 07:00:00.123456+00:00',
    });
    assert.deepEqual(recoveryTargetSettings({ lsn: '0/3000148' }), {
      recovery_target_lsn: '0/3000148',
    });
    assert.deepEqual(recoveryTargetSettings({ restorePoint: 'before-migration_2' }), {
      recovery_target_name: 'before-migration_2',
    });
  });

  it('refuses a restore point name that would need quoting', () => {
    for (const name of ['a b', 'x"; DROP', "it's", ''])
      assert.throws(() => recoveryTargetSettings({ restorePoint: name }), /database name rules/);
  });

  it('refuses targets beyond their grammar: quotes, $(...), newlines, anything but the target', () => {
    const hostile = ['"', "'", '$(touch x)', '`id`', '\n', '; id', ' '];
    for (const extra of hostile) {
      for (const target of [
        { time: `2026-11-24T07:00:00.123456Z${extra}` },
        { time: `${extra}2026-11-24T07:00:00Z` },
        { lsn: `0/3000148${extra}` },
        { restorePoint: `before${extra}` },
      ]) {
        assert.throws(() => checkedRecoveryTarget(target), /must/, JSON.stringify(target));
        assert.throws(() => recoveryTargetSettings(target), /must/, JSON.stringify(target));
      }
    }
    for (const time of ['2026-11-24 07:00:00Z', '2026-11-24T07:00:00+01:00', 'Nov 24 2026', ''])
      assert.throws(() => checkedRecoveryTarget({ time }), /UTC ISO 8601/, time);
    assert.deepEqual(checkedRecoveryTarget({ time: '2026-11-24T07:00:00Z' }), {
      time: '2026-11-24T07:00:00Z',
    });
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
    // The watch reads on its own timer: on a loaded machine its next read may come late.
    await eventually(() => assert.equal(reports.at(-1), 1), { timeoutMs: 5_000, intervalMs: 20 });
    stop();
  });

  it('stops when its signal is aborted, and does not start the server again', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'pgcloud-recover-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const logFile = join(dir, 'server.log');
    // What the log says when replay ran out of WAL before the target: recover() would start
    // the server again without one, but not for a restore that was cancelled.
    await writeFile(
      logFile,
      'FATAL:  recovery ended before configured recovery target was reached\n',
    );
    const cancel = new AbortController();
    const calls: string[] = [];
    const control = {
      start: (settings: Readonly<Record<string, string>>) => {
        calls.push(`start ${Object.keys(settings).length}`);
        cancel.abort(new Error('cancelled'));
        return Promise.resolve();
      },
      stop: (mode: string) => Promise.resolve(calls.push(`stop ${mode}`)),
      // Nothing listens here: a look at the server would fail with ENOENT, not the abort.
      address: { socketDir: join(dir, 'no-socket'), port: 5432 },
      logFile,
      signal: cancel.signal,
    };
    await assert.rejects(
      recover(control, { target: { lsn: '0/3000148' }, restoreCommand: '/bin/false' }),
      /cancelled/,
    );
    assert.deepEqual(calls, ['start 4']);
    calls.length = 0;
    await assert.rejects(recover(control, undefined), /cancelled/);
    assert.deepEqual(calls, [], 'an aborted recovery starts nothing');
  });
});
