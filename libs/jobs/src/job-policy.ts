/**
 * Thrown by a handler when retrying cannot help: the job fails at once, and onFailed gets
 * `kind` (say, `corrupt-archive`) to act on.
 */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';

  constructor(
    message: string,
    readonly kind: string = 'permanent',
  ) {
    super(message);
  }
}

const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 30_000;
const MAX_ERROR_LENGTH = 2000;

/** The default wait before retry `attempt` + 1: 1 s, 2 s, 4 s... capped at 30 s. */
export function defaultBackoff(attempt: number): number {
  return Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
}

/** What to do after a handler threw on `attempt` of `maxAttempts`. */
export function failureStep(
  error: unknown,
  attempt: number,
  maxAttempts: number,
): 'retry' | 'fail' {
  if (error instanceof PermanentJobError) return 'fail';
  return attempt < maxAttempts ? 'retry' : 'fail';
}

/** The reason stored in last_error and given to onFailed: the error's message, bounded. */
export function errorReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.trim() === '' ? 'the handler failed without a message' : message;
  // Bounded so a handler that throws a whole response body cannot bloat the table or logs.
  return reason.length > MAX_ERROR_LENGTH ? `${reason.slice(0, MAX_ERROR_LENGTH)}…` : reason;
}

/** The reason for a reclaimed job whose attempts were all used by workers that died. */
export function abandonedReason(maxAttempts: number, lastError: string | null): string {
  const base = `gave up after ${maxAttempts} attempts: the last worker stopped renewing its lease`;
  return lastError ? `${base} (earlier error: ${lastError})` : base;
}
