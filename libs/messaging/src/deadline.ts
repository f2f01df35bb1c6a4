import type { RequestContext } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

// Timeouts nest (docs/api/errors.md#timeouts), so a 503 answer means nothing was started.
// ctx.deadline is when a handler's answer is due. A handler that asks another service
// waits less than it has left, keeping a tenth for its own work once that answer is in
// (the gateway, which only wraps the answer, keeps nothing); the service asked gets a
// deadline a tenth before that wait ends, leaving its answer time to travel back; and a
// handler whose deadline has passed starts nothing (its caller answers 503). Each level of
// nesting so gets about four fifths of its caller's time. Times are epoch milliseconds;
// `now` is a parameter, so the arithmetic is tested without a clock.

/** The tenth of a span that the side with less to do keeps for the other. */
export function reserveMs(spanMs: number): number {
  return Math.ceil(Math.max(0, spanMs) / 10);
}

/**
 * How long a call made at `now` may wait for its answer: the client's own timeout, cut to
 * what the handler making it has left before its answer is due, less its reserve. At the
 * edge (the gateway) nothing is kept: once the answer is in, it is only wrapped and sent.
 * Zero or less: there is no time left to ask.
 */
export function callTimeoutMs(
  timeoutMs: number,
  deadline: number | undefined,
  now: number,
  atEdge = false,
): number {
  if (deadline === undefined) return timeoutMs;
  const timeLeftMs = deadline - now;
  return Math.min(timeoutMs, timeLeftMs - (atEdge ? 0 : reserveMs(timeLeftMs)));
}

/** When the answer to a call that waits `waitMs` from `now` is due at the service asked. */
export function answerDueAt(waitMs: number, now: number): number {
  return now + waitMs - reserveMs(waitMs);
}

/** True when an answer due at `deadline` can no longer be given in time. */
export function isPastDeadline(deadline: number | undefined, now: number): boolean {
  return typeof deadline === 'number' && now >= deadline;
}

/**
 * Refuses, with SERVICE_UNAVAILABLE, to go on with a request whose answer is overdue: its
 * caller has answered 503 or is about to. A handler that creates something calls it just
 * before it commits, so work finished after that answer is never kept.
 */
export function assertTimeLeft(ctx: RequestContext, now: number = Date.now()): void {
  if (isPastDeadline(ctx.deadline, now)) throw outOfTime();
}

/** The answer to a request that ran out of time before anything was done. */
export function outOfTime(): DomainError {
  return new DomainError(
    'SERVICE_UNAVAILABLE',
    'The request ran out of time before it could be done; nothing was changed. Try again.',
  );
}

/**
 * Waits for `work` (which must not reject) while the answer to `ctx` can still be given in
 * time, keeping the reserve; answers whether it finished. Work that outlasts the wait goes
 * on: for a step after the commit, whose request must be answered as accepted.
 */
export async function waitWithinDeadline(
  ctx: RequestContext,
  work: Promise<unknown>,
  now: number = Date.now(),
): Promise<boolean> {
  const waitMs = callTimeoutMs(Number.POSITIVE_INFINITY, ctx.deadline, now);
  if (waitMs === Number.POSITIVE_INFINITY) return work.then(() => true);
  if (waitMs <= 0) return false;
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<false>((resolve) => (timer = setTimeout(resolve, waitMs, false)));
  try {
    return await Promise.race([work.then(() => true as const), outOfTime]);
  } finally {
    clearTimeout(timer);
  }
}
