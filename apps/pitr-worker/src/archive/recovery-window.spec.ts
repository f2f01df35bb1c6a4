import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ArchiveBackup } from '@pgcloud/contracts';
import { baseBackupsOf, coveredUntil, recoveryWindow, windowBase } from './recovery-window.js';

const backup = (
  id: string,
  startLsn: string,
  completedAt: string,
  more: Partial<ArchiveBackup> = {},
) =>
  ({
    id,
    status: 'completed',
    start_lsn: startLsn,
    end_lsn: startLsn,
    timeline: 1,
    created_at: completedAt,
    completed_at: completedAt,
    size_bytes: 4096,
    ...more,
  }) satisfies ArchiveBackup;

describe('recovery window', () => {
  const archive = {
    timeline: 1,
    startLsn: 0x3000000n,
    startedAt: new Date('2026-11-19T00:00:00Z'),
  };

  it('builds only on completed backups of the archive: its timeline, begun after it', () => {
    const bases = baseBackupsOf(
      [
        backup('bkp_late', '0/5000028', '2026-11-22T10:05:00Z'),
        backup('bkp_before', '0/2000028', '2026-11-22T09:00:00Z'),
        backup('bkp_other_timeline', '0/6000028', '2026-11-22T10:06:00Z', { timeline: 2 }),
        backup('bkp_running', '0/7000028', '2026-11-22T10:07:00Z', {
          status: 'running',
          completed_at: null,
        }),
        backup('bkp_first', '0/3000060', '2026-11-22T10:00:00Z'),
        backup('bkp_earlier_archive', '0/8000028', '2026-11-18T10:00:00Z'),
      ],
      archive,
    );
    assert.deepEqual(
      bases.map((b) => b.id),
      ['bkp_first', 'bkp_late'],
    );
  });

  it('starts from the newest base older than the retention, else the oldest', () => {
    const bases = baseBackupsOf(
      [
        backup('bkp_day1', '0/3000060', '2026-11-20T10:00:00Z'),
        backup('bkp_day2', '0/9000028', '2026-11-21T10:00:00Z'),
        backup('bkp_day3', '0/F000028', '2026-11-22T10:00:00Z'),
      ],
      archive,
    );
    assert.equal(windowBase(bases, new Date('2026-11-21T12:00:00Z'))?.id, 'bkp_day2');
    assert.equal(windowBase(bases, new Date('2026-11-19T12:00:00Z'))?.id, 'bkp_day1');
    assert.equal(windowBase([], new Date()), undefined);
  });

  it('is empty until the archive reaches the end of the base backup', () => {
    const base = {
      id: 'bkp_a',
      startLsn: 1n,
      endLsn: 2n,
      sizeBytes: 4096,
      completedAt: new Date('2026-11-22T10:00:00Z'),
    };
    assert.equal(recoveryWindow(base, new Date('2026-11-22T09:59:59Z'), null).from, null);
    assert.equal(recoveryWindow(undefined, new Date(), null).to, null);
    assert.deepEqual(recoveryWindow(base, new Date('2026-11-22T10:00:05Z'), null), {
      from: '2026-11-22T10:00:00.000Z',
      to: '2026-11-22T10:00:05.000Z',
      base_backup_time: '2026-11-22T10:00:00.000Z',
      latest_wal_time: '2026-11-22T10:00:00.000Z',
    });
  });

  it('covers a moment only once the WAL written by then is archived', () => {
    const samples = [
      { at: new Date(1000), lsn: 100n },
      { at: new Date(2000), lsn: 250n },
      { at: new Date(3000), lsn: 250n },
      { at: new Date(4000), lsn: 400n },
    ];
    assert.equal(coveredUntil(samples, 99n), undefined);
    assert.equal(coveredUntil(samples, 300n)?.getTime(), 3000);
    assert.equal(coveredUntil(samples, 400n)?.getTime(), 4000);
  });
});
