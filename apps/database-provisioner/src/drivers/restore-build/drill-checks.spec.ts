import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RestoreSegment } from '../database-driver.js';
import { BrokenWalError, CorruptArchiveError } from '../database-driver.js';
import { failedCheck, walChainPassed, walChainProblem } from './drill-checks.js';

const segment = (name: string, etags?: (string | null)[]): RestoreSegment => ({
  name,
  urls: ['https://s3/x'],
  partial: false,
  sizeBytes: 16 * 1024 * 1024,
  ...(etags ? { etags } : {}),
});

describe('drill checks', () => {
  it('finds the WAL chain whole only without gaps, on one timeline', () => {
    const chain = [
      '0000000100000000000000FE',
      '0000000100000000000000FF',
      '000000010000000100000000',
    ];
    assert.equal(walChainProblem(chain.map((name) => segment(name))), undefined);
    assert.match(
      walChainProblem([segment(chain[0] ?? ''), segment(chain[2] ?? '')]) ?? '',
      /no segment between 0000000100000000000000FE and 000000010000000100000000/,
    );
    assert.match(
      walChainProblem([segment(chain[0] ?? ''), segment('0000000200000000000000FF')]) ?? '',
      /on timeline 2/,
    );
    assert.match(walChainProblem([segment('../etc/passwd')]) ?? '', /not a WAL segment's name/);
    assert.match(walChainProblem([]) ?? '', /no WAL segment/);
  });

  it('says what a passed chain covered', () => {
    const check = walChainPassed([
      segment('000000010000000000000003', [`"${'a'.repeat(32)}"`, null]),
      segment('000000010000000000000004', ['b'.repeat(32), `${'c'.repeat(32)}-2`]),
    ]);
    assert.equal(check.passed, true);
    assert.match(
      check.detail,
      /2 segments from 000000010000000000000003 to 000000010000000000000004/,
    );
    assert.match(check.detail, /2 objects' MD5/);
  });

  it('names the check a failed build failed, or leaves it to a retry', () => {
    const wal = failedCheck(new BrokenWalError('WAL segment X is missing'), 'recover', []);
    assert.deepEqual(wal, { name: 'wal_chain', passed: false, detail: 'WAL segment X is missing' });
    const corrupt = failedCheck(new CorruptArchiveError('checksum differs'), 'download', []);
    assert.equal(corrupt?.name, 'consistent');
    assert.match(corrupt?.detail ?? '', /not the one archived: checksum differs/);
    const recovery = failedCheck(new Error('pg_ctl failed in /data/x'), 'recover', []);
    assert.equal(recovery?.name, 'consistent');
    assert.doesNotMatch(recovery?.detail ?? '', /\/data/, "a tool's words stay in the log");
    // A download cut off says nothing of the backup; after `consistent` passed, neither does
    // a later failure (a check that could not run): the job tries again.
    assert.equal(failedCheck(new Error('socket hang up'), 'download', []), undefined);
    const passed = [{ name: 'consistent' as const, passed: true, detail: '' }];
    assert.equal(failedCheck(new Error('connection lost'), 'check', passed), undefined);
  });
});
