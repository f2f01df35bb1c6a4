/** Undoes one thing a benchmark set up (a stack, a server, a temp folder). */
export type Cleanup = () => Promise<void>;

/** Runs every cleanup even when one fails, so no process, server or test database is left. */
async function runCleanups(cleanups: Cleanup[]): Promise<void> {
  for (const cleanup of cleanups.splice(0)) {
    try {
      await cleanup();
    } catch (err) {
      console.error('cleanup failed:', err);
      process.exitCode = 1;
    }
  }
}

/**
 * Runs a benchmark and prints its report; the benchmark registers a cleanup for whatever
 * it starts, and those run at the end, on failure and on Ctrl-C alike.
 */
export async function runBench(bench: (cleanups: Cleanup[]) => Promise<string>): Promise<void> {
  const cleanups: Cleanup[] = [];
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void runCleanups(cleanups).finally(() => process.kill(process.pid, signal));
    });
  }
  try {
    console.log(await bench(cleanups));
  } catch (err) {
    console.error('bench failed:', err);
    process.exitCode = 1;
  } finally {
    await runCleanups(cleanups);
  }
}

/** BENCH_COUNT, the number of runs a benchmark makes (`fallback` unless set). */
export function benchCount(
  fallback = 10,
  env: Record<string, string | undefined> = process.env,
): number {
  const raw = env['BENCH_COUNT'] ?? String(fallback);
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`BENCH_COUNT must be a whole number >= 1, not "${raw}"`);
  return count;
}
