import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durationMs } from './duration.js';

describe('durationMs', () => {
  it('reads seconds, minutes, hours and days', () => {
    assert.equal(durationMs('90s'), 90_000);
    assert.equal(durationMs('30m'), 1_800_000);
    assert.equal(durationMs('12h'), 43_200_000);
    assert.equal(durationMs('7d'), 604_800_000);
  });

  it('refuses anything else', () => {
    for (const text of ['', '7', 'd', '0d', '1.5h', '-1d', '1w', '1 d', '01d'])
      assert.throws(() => durationMs(text), /not a duration/, text);
  });
});
