import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseBaseBackupLog } from './base-backup.js';

describe('parseBaseBackupLog', () => {
  it("reads the WAL points and the timeline from pg_basebackup's verbose log", () => {
    const log = [
      'pg_basebackup: initiating base backup, waiting for checkpoint to complete',
      'pg_basebackup: checkpoint completed',
      'pg_basebackup: write-ahead log start point: 0/2000028 on timeline 1',
      'pg_basebackup: write-ahead log end point: 1A/FF000100',
      'pg_basebackup: base backup completed',
    ].join('\n');
    assert.deepEqual(parseBaseBackupLog(log), {
      startLsn: '0/2000028',
      endLsn: '1A/FF000100',
      timeline: 1,
    });
  });

  it('answers nothing for a log without both points', () => {
    assert.equal(
      parseBaseBackupLog('pg_basebackup: write-ahead log start point: 0/2000028 on timeline 3'),
      undefined,
    );
    assert.equal(parseBaseBackupLog(''), undefined);
  });
});
