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
}

/** What one load run measured; latencies in milliseconds. */
export interface LoadFigures {
  p50: number;
  p99: number;
  requestsPerSecond: number;
  responses: number;
  /** CPU milliseconds the load generator's own thread used, where /proc tells. */
  loadCpuMs?: number;
}

/** The message the load worker posts back. */
export type LoadReply = { ok: true; figures: LoadFigures } | { ok: false; error: string };

/**
 * Runs autocannon in a worker thread. The baseline server lives on this process's main
 * thread; a load generator on the same event loop would take its CPU time and slow the
 * baseline down, so the load comes from another thread for both targets alike.
 */
export function runLoad(request: LoadRequest): Promise<LoadFigures> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./load-worker.js', import.meta.url), {
      workerData: request,
    });
    let reply: LoadReply | undefined;
    worker.once('message', (message: LoadReply) => {
      reply = message;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (reply?.ok) resolve(reply.figures);
      else reject(new Error(reply?.error ?? `the load worker exited with code ${code}`));
    });
  });
}
