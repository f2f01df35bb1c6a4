import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ttlSecondsOf } from './local.js';

describe('local create --ttl', () => {
  it('takes durations as the settings write them, in whole seconds', () => {
    assert.equal(ttlSecondsOf('90s'), 90);
    assert.equal(ttlSecondsOf('2h'), 7200);
    assert.equal(ttlSecondsOf('7d'), 604_800);
    assert.throws(() => ttlSecondsOf('soon'), /--ttl takes a duration/);
    assert.throws(() => ttlSecondsOf('1.5h'), /--ttl takes a duration/);
  });
});
