import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BucketState } from './token-bucket.js';
import { REFUND, takeToken } from './token-bucket.js';

const FREE = { perMinute: 60, burst: 10 };

describe('takeToken', () => {
  it('admits the burst at once and refuses the next with Retry-After', () => {
    let state: BucketState | undefined;
    for (let i = 0; i < 10; i++) {
      const result = takeToken(state, FREE, 1000);
      assert.equal(result.decision.allowed, true, `request ${i + 1}`);
      assert.equal(result.decision.remaining, 9 - i);
      state = result.state;
    }
    const eleventh = takeToken(state, FREE, 1000);
    assert.equal(eleventh.decision.allowed, false);
    assert.equal(eleventh.decision.remaining, 0);
    assert.equal(eleventh.decision.retryAfterSeconds, 1);
    assert.equal(eleventh.decision.resetSeconds, 10);
    assert.equal(eleventh.decision.limit, 60);
  });

  it('refills at perMinute/60 a second, never past the burst', () => {
    let state: BucketState | undefined;
    for (let i = 0; i < 10; i++) state = takeToken(state, FREE, 0).state;
    assert.equal(takeToken(state, FREE, 500).decision.allowed, false);
    const later = takeToken(state, FREE, 1000);
    assert.equal(later.decision.allowed, true);
    const muchLater = takeToken(later.state, FREE, 3_600_000);
    assert.equal(muchLater.decision.remaining, 9);
  });

  it('admits at most burst + rate x elapsed over a stretch', () => {
    let state: BucketState | undefined;
    let admitted = 0;
    for (let t = 0; t <= 5000; t += 50) {
      const result = takeToken(state, FREE, t);
      state = result.state;
      if (result.decision.allowed) admitted++;
    }
    assert.equal(admitted, 10 + 5);
  });

  it('gives a token back on a refund, never past the burst', () => {
    let state = takeToken(undefined, FREE, 0).state;
    state = takeToken(state, FREE, 0).state;
    const refunded = takeToken(state, FREE, 0, REFUND);
    assert.equal(refunded.decision.allowed, true);
    assert.equal(refunded.decision.remaining, 9);
    const full = takeToken(takeToken(refunded.state, FREE, 0, REFUND).state, FREE, 0, REFUND);
    assert.equal(full.decision.remaining, 10);
  });
});
