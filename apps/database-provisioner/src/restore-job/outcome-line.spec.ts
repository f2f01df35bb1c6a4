import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptArchiveError } from '../drivers/database-driver.js';
import { drillLine, failureLine, OUTCOME_MAX_BYTES, successLine } from './outcome-line.js';

describe('the build outcome line', () => {
  it('tells a built restore as the driver reads it', () => {
    const line = successLine({
      walFilesApplied: 3,
      stepSeconds: { download: 1.5, recover: 2, check: 0.25 },
    });
    assert.equal(
      line,
      '{"walFilesApplied":3,"stepSeconds":{"download":1.5,"recover":2,"check":0.25}}\n',
    );
  });

  it('tells a corrupt archive apart from other failures', () => {
    const corrupt = JSON.parse(failureLine(new CorruptArchiveError('bad sum'))) as object;
    assert.deepEqual(corrupt, { error: 'bad sum', corrupt: true });
    const other = JSON.parse(failureLine(new Error('HTTP 403'))) as object;
    assert.deepEqual(other, { error: 'HTTP 403', corrupt: false });
  });

  it('replaces the secrets it is given', () => {
    const url = 'https://s3/b.tar.zst?X-Amz-Signature=abc';
    const line = failureLine(new Error(`fetch ${url} as pw-123 failed`), [url, 'pw-123', '']);
    assert.deepEqual(JSON.parse(line), { error: 'fetch *** as *** failed', corrupt: false });
  });

  it('cuts a long message to fit the termination message, as one line of JSON', () => {
    for (const unit of ['x', '"', '\u0001', 'é', '😀']) {
      const line = failureLine(new Error(unit.repeat(10_000)));
      assert.ok(
        Buffer.byteLength(line) <= OUTCOME_MAX_BYTES,
        `${unit}: ${Buffer.byteLength(line)}`,
      );
      assert.ok(Buffer.byteLength(line) > OUTCOME_MAX_BYTES - 16, `${unit}: cut too short`);
      assert.equal(line.indexOf('\n'), line.length - 1);
      const { error } = JSON.parse(line) as { error: string };
      assert.ok(error.startsWith(unit) && error.endsWith('…'));
    }
  });

  it("tells a drill's checks within a termination message, without the secrets", () => {
    const detail = `fetched https://s3/x?sig=secret then ${'é'.repeat(2000)}`;
    const line = drillLine(
      {
        checks: ['consistent', 'target_reached', 'amcheck', 'wal_chain'].map((name) => ({
          name: name as 'consistent',
          passed: false,
          detail,
        })),
        restoreSeconds: 1,
        walFilesApplied: 2,
        cause: detail,
      },
      ['https://s3/x?sig=secret'],
    );
    assert.ok(Buffer.byteLength(line) <= OUTCOME_MAX_BYTES, `${Buffer.byteLength(line)} bytes`);
    assert.ok(!line.includes('sig=secret'));
    const parsed = JSON.parse(line) as { checks: { detail: string }[]; walFilesApplied: number };
    assert.equal(parsed.checks.length, 4);
    assert.equal(parsed.walFilesApplied, 2);
  });
});
