import { setTimeout as delay } from 'node:timers/promises';

export interface EventuallyOptions {
  /** How long the state may take to arrive; past it, the check's last failure is thrown. */
  timeoutMs?: number;
  /** The pause between two checks. */
  intervalMs?: number;
}

/**
 * Runs `check` until it returns without throwing, and answers what it returned: the way a
 * test states something that holds only once background work has caught up (a removal, a
 * sweep, a receiver's upload). `check` asserts what must hold; past `timeoutMs` its last
 * assertion error is thrown, with how long it was waited for. A single read of an eventual
 * state is a race; this is the bounded wait instead.
 */
export async function eventually<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 60_000, intervalMs = 200 }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() >= deadline) {
        if (err instanceof Error) err.message += ` (still so after ${timeoutMs} ms)`;
        throw err;
      }
    }
    await delay(intervalMs);
  }
}

/** `eventually` for a check that answers undefined until its value is there. */
export function eventuallyDefined<T>(
  what: string,
  read: () => Promise<T | undefined>,
  options?: EventuallyOptions,
): Promise<T> {
  return eventually(async () => {
    const value = await read();
    if (value === undefined) throw new Error(`${what}: not yet`);
    return value;
  }, options);
}
