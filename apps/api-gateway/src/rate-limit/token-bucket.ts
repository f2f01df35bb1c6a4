/** A bucket's size and refill: `burst` tokens, `perMinute` tokens a minute. */
export interface BucketLimit {
  perMinute: number;
  burst: number;
}

/** A bucket's fill at a moment. */
export interface BucketState {
  tokens: number;
  updatedAtMs: number;
}

/** The outcome of one request against a bucket, with what the headers tell. */
export interface BucketDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
}

/**
 * Takes one token at `nowMs` (docs/operating.md#before-others-reach-it): the bucket refills
 * continuously at perMinute/60 a second up to burst; a request is admitted when a whole token is
 * there. `REFUND` gives one back instead (never past the burst), for a request that turned out not
 * to be the bucket's to pay.
 */
export function takeToken(
  state: BucketState | undefined,
  limit: BucketLimit,
  nowMs: number,
  cost: 1 | typeof REFUND = 1,
): { state: BucketState; decision: BucketDecision } {
  const ratePerSecond = limit.perMinute / 60;
  const elapsedSeconds = state ? Math.max(0, nowMs - state.updatedAtMs) / 1000 : 0;
  const available = state
    ? Math.min(limit.burst, state.tokens + elapsedSeconds * ratePerSecond)
    : limit.burst;
  if (cost === REFUND) {
    const tokens = Math.min(limit.burst, available + 1);
    return { state: { tokens, updatedAtMs: nowMs }, decision: decide(true, tokens, limit) };
  }
  const allowed = available >= 1;
  const tokens = allowed ? available - 1 : available;
  return { state: { tokens, updatedAtMs: nowMs }, decision: decide(allowed, tokens, limit) };
}

/** The cost of a refund: one token back. */
export const REFUND = -1;

/** What the headers tell after a take left `tokens` in the bucket (shared by every store). */
export function decide(allowed: boolean, tokens: number, limit: BucketLimit): BucketDecision {
  const ratePerSecond = limit.perMinute / 60;
  return {
    allowed,
    limit: limit.perMinute,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((limit.burst - tokens) / ratePerSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / ratePerSecond)),
  };
}
