import type { AttemptOutcome } from '../targets/target-client.js';

// The rules an attempt's outcome is judged by (docs/api/webhooks.md#retries-and-order):
// pure, so they are tested without a clock, a database or a receiver.

/** A 2xx answer delivers the event; anything else, or no answer, is a failed attempt. */
export function isDelivered(outcome: AttemptOutcome): boolean {
  const status = outcome.statusCode;
  return status !== undefined && status >= 200 && status < 300;
}

/**
 * How long after failed attempt number `attempt` (the first is 1) the event is tried again:
 * the schedule's step of that number, or undefined once the schedule is spent (the event
 * is then given up for this endpoint).
 */
export function retryWaitMs(scheduleMs: readonly number[], attempt: number): number | undefined {
  return attempt >= 1 ? scheduleMs[attempt - 1] : undefined;
}

/** True once every attempt since `failingSince` has failed for `disableAfterMs` at `now`. */
export function isDueToDisable(failingSince: Date, now: Date, disableAfterMs: number): boolean {
  return now.getTime() - failingSince.getTime() >= disableAfterMs;
}

/** A failed attempt in a few words: its status, its reason, or both. */
export function failureText(outcome: AttemptOutcome): string {
  const status = outcome.statusCode === undefined ? undefined : `HTTP ${outcome.statusCode}`;
  return [status, outcome.error].filter(Boolean).join(': ') || 'no answer';
}

const UNITS: Record<string, string> = { s: 'second', m: 'minute', h: 'hour', d: 'day' };

/** Why an endpoint was disabled: for how long its deliveries failed, and the last failure. */
export function disabledReason(disableAfter: string, lastFailure: string): string {
  const count = Number.parseInt(disableAfter, 10);
  const unit = UNITS[disableAfter.slice(-1)] ?? disableAfter.slice(-1);
  return `every delivery failed for ${count} ${unit}${count === 1 ? '' : 's'} (last: ${lastFailure})`;
}
