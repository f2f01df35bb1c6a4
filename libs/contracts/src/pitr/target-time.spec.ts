import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromMicros, microsOf, parseTargetTime } from './target-time.js';

describe('PITR target times', () => {
  it('keeps microseconds and writes UTC with six decimals', () => {
    const t = parseTargetTime('2026-11-22T10:00:00.123456Z');
    assert.equal(t?.iso, '2026-11-22T10:00:00.123456Z');
    assert.equal(t?.micros, BigInt(Date.parse('2026-11-22T10:00:00.123Z')) * 1000n + 456n);
    assert.equal(parseTargetTime('2026-11-22T10:00:00Z')?.iso, '2026-11-22T10:00:00.000000Z');
    assert.equal(
      parseTargetTime('2026-11-22T12:00:00.5+02:00')?.iso,
      '2026-11-22T10:00:00.500000Z',
    );
  });

  it('refuses what is not an ISO 8601 moment', () => {
    for (const text of [
      'yesterday',
      '2026-11-22',
      '2026-11-22 10:00:00Z',
      '2026-11-22T10:00:00',
      '2026-11-22T10:00:00.1234567Z',
      '2026-13-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
    ])
      assert.equal(parseTargetTime(text), undefined, text);
  });

  it('converts to and from milliseconds', () => {
    const date = new Date('2026-11-22T10:00:00.123Z');
    assert.equal(fromMicros(microsOf(date)).iso, '2026-11-22T10:00:00.123000Z');
    assert.equal(fromMicros(microsOf(date) - 1n).iso, '2026-11-22T10:00:00.122999Z');
  });
});
