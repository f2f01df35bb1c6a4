import { Worker } from 'node:worker_threads';

/**
 * What each client sends, over and over: `list` is GET `url`; `create-delete` is a POST of
 * a new project to `url` then a DELETE of the project it answered, each timed on its own.
 */
export type Scenario = 'list' | 'create-delete';

/** One load run: `scenario` against `url` from `connections` clients for `seconds`. */
export interface LoadRequest {
  url: string;
  scenario: Scenario;
  connections: number;
  seconds: number;
  headers: Record<string, string>;
  /**
   * Answers within this many seconds of the start are not counted (but paid for, in
   * `answered`): every client connecting at once is a burst no steady load has. Part of
   * `seconds`, which autocannon takes in whole seconds.
   */
  settleSeconds?: number;
}

/**
 * What one load run measured, from a clean run only (every answer 2xx, no errors): the
 * latency of every answer in milliseconds, with sub-millisecond precision.
 */
export interface LoadSample {
  latencies: number[];
  /** The time the counted answers came in. */
  seconds: number;
  /** Every answer, the settling ones too: what the run's CPU time paid for. */
  answered: number;
  /** CPU milliseconds the load generator's own thread used, where /proc tells. */
  loadCpuMs?: number;
}

/** What one or more load runs of a target measured together; latencies in milliseconds. */
export interface LoadFigures {
  p50: number;
  p99: number;
  requestsPerSecond: number;
  responses: number;
  /** Every answer, the settling ones too: what the runs' CPU time paid for. */
  answered: number;
  /** CPU milliseconds the load generator's own thread used, where /proc tells. */
  loadCpuMs?: number;
}

/** The messages the load worker posts: once it starts the load, then what came out. */
export type LoadMessage =
  { started: true } | { ok: true; sample: LoadSample } | { ok: false; error: string };

/** The value at rank p% of ascending `sorted` (nearest rank). */
function percentile(sorted: number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1] ?? Number.NaN;
}

/** The figures of a target's runs taken as one: every answer of every run counts once. */
export function figuresOf(samples: LoadSample[]): LoadFigures {
  const sorted = samples.flatMap((sample) => sample.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  const cpu = samples.map((sample) => sample.loadCpuMs);
  const loadCpuMs = cpu.every((ms) => ms !== undefined)
    ? cpu.reduce((sum: number, ms) => sum + (ms ?? 0), 0)
    : undefined;
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    requestsPerSecond: sorted.length / seconds,
    responses: sorted.length,
    answered: samples.reduce((sum, sample) => sum + sample.answered, 0),
    ...(loadCpuMs === undefined ? {} : { loadCpuMs }),
  };
}

/**
 * Runs autocannon in a worker thread. The baseline server lives on this process's main
 * thread; a load generator on the same event loop would take its CPU time and slow the
 * baseline down, so the load comes from another thread for both targets alike. `onStart`
 * is called once the worker has loaded and starts the load, so a reading of CPU time
 * taken then leaves the worker's own start out.
 */
export function runLoad(request: LoadRequest, onStart?: () => void): Promise<LoadSample> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./load-worker.js', import.meta.url), {
      workerData: request,
    });
    let reply: Exclude<LoadMessage, { started: true }> | undefined;
    worker.on('message', (message: LoadMessage) => {
      if ('started' in message) onStart?.();
      else reply = message;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (reply?.ok) resolve(reply.sample);
      else reject(new Error(reply?.error ?? `the load worker exited with code ${code}`));
    });
  });
}
