import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Asks `check` every `pollMs` until it answers a value (not undefined), and answers it.
 * Past `timeoutMs` it throws with what `describe` says of the last look; `signal` stops it
 * at once. A check that throws is a look that found nothing yet, remembered for the message.
 */
export async function waitUntil<T>(
  check: () => Promise<T | undefined>,
  options: { timeoutMs: number; pollMs: number; what: string; signal?: AbortSignal },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last = 'not yet';
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const found = await check();
      if (found !== undefined) return found;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline)
      throw new Error(`${options.what}: not within ${options.timeoutMs / 1000} s (${last})`);
    await sleep(options.pollMs, undefined, options.signal ? { signal: options.signal } : {});
  }
}
