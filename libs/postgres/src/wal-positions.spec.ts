import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  WAL_SEGMENT_BYTES,
  formatLsn,
  parseLsn,
  parseSegmentName,
  segmentName,
  segmentOf,
  segmentStart,
} from './wal-positions.js';

describe('WAL positions', () => {
  it('reads and writes LSNs as PostgreSQL prints them', () => {
    assert.equal(parseLsn('0/3002018'), 0x3002018n);
    assert.equal(parseLsn('1/0'), 0x1_0000_0000n);
    assert.equal(formatLsn(0x3002018n), '0/3002018');
    assert.equal(formatLsn(parseLsn('A/FF000028')), 'A/FF000028');
    assert.throws(() => parseLsn('3002018'), /not a WAL position/);
  });

  it('names segments as pg_walfile_name does', () => {
    // pg_walfile_name('0/3002018') on timeline 1, and a position past the first 4 GiB.
    assert.equal(segmentName(1, segmentOf(parseLsn('0/3002018'))), '000000010000000000000003');
    assert.equal(segmentName(2, segmentOf(parseLsn('1/5000000'))), '000000020000000100000005');
    assert.equal(segmentStart(3n), BigInt(3 * WAL_SEGMENT_BYTES));
  });

  it('reads segment names back, and nothing else', () => {
    assert.deepEqual(parseSegmentName('000000020000000100000005'), { timeline: 2, segno: 261n });
    assert.equal(parseSegmentName('000000010000000000000003.partial'), undefined);
    assert.equal(parseSegmentName('00000002.history'), undefined);
  });
});
