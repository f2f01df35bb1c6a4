import { Injectable } from '@nestjs/common';
import type { BucketDecision, BucketLimit, BucketState, REFUND } from './token-bucket.js';
import { takeToken } from './token-bucket.js';

/** Where buckets live: memory for a lone gateway, Redis for many (redis-rate-limit.store.ts). */
export abstract class RateLimitStore {
  /** Takes a token (or gives one back: `REFUND`). */
  abstract take(key: string, limit: BucketLimit, cost?: 1 | typeof REFUND): Promise<BucketDecision>;
}

const SWEEP_EVERY = 10_000;

/** Buckets in this process's memory; full buckets are forgotten now and then. */
@Injectable()
export class InMemoryRateLimitStore extends RateLimitStore {
  private readonly buckets = new Map<string, BucketState>();
  private takes = 0;

  take(key: string, limit: BucketLimit, cost: 1 | typeof REFUND = 1): Promise<BucketDecision> {
    const now = Date.now();
    const { state, decision } = takeToken(this.buckets.get(key), limit, now, cost);
    this.buckets.set(key, state);
    if (++this.takes % SWEEP_EVERY === 0) this.sweep(now, limit);
    return Promise.resolve(decision);
  }

  private sweep(now: number, limit: BucketLimit): void {
    // A bucket untouched for longer than it takes the slowest bucket to refill is full: drop it.
    const fullAfterMs = (limit.burst / (limit.perMinute / 60)) * 1000 * 10;
    for (const [key, state] of this.buckets)
      if (now - state.updatedAtMs > fullAfterMs) this.buckets.delete(key);
  }
}
