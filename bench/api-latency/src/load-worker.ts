// Worker thread of runLoad (load.ts): one autocannon run, its figures posted back.
import { randomBytes } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { threadCpuMs } from './cpu.js';
import type { LoadMessage, LoadRequest, LoadSample } from './load.js';

interface Run {
  /** Latency of every 2xx answer, in milliseconds with sub-millisecond precision. */
  latencies: number[];
  /** Every 2xx answer, the settling ones too. */
  answered: number;
  /** Answers by status code. */
  statuses: Map<number, number>;
  result: Pick<autocannon.Result, 'errors' | 'timeouts'>;
  /** The time the counted answers came in. */
  seconds: number;
  /** CPU milliseconds this thread used for the run. */
  cpuMs?: number;
}

/**
 * The create-delete pair: a project with a name of its own, then a DELETE of the id the
 * POST answered. A failed POST fails the run anyway (sampleOf), so it needs no path here.
 */
function createThenDelete(path: string): autocannon.Request[] {
  const pairs = new WeakMap<object, string>();
  return [
    {
      method: 'POST',
      path,
      setupRequest: (req) => ({
        ...req,
        headers: { ...req.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `bench-${randomBytes(6).toString('hex')}` }),
      }),
      onResponse: (status, body, context) => {
        if (status === 201)
          pairs.set(context, (JSON.parse(body) as { data: { id: string } }).data.id);
      },
    },
    {
      method: 'DELETE',
      setupRequest: (req, context) => ({ ...req, path: `${path}/${pairs.get(context) ?? ''}` }),
    },
  ];
}

/**
 * Latencies are taken from each response rather than from autocannon's histogram, which
 * keeps whole milliseconds only: a sub-millisecond baseline would read 0 ms and its ratio
 * would be meaningless.
 */
function load(request: LoadRequest): Promise<Run> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let answered = 0;
  const settleMs = (request.settleSeconds ?? 0) * 1000;
  const startedAt = performance.now();
  const cpuBefore = threadCpuMs();
  parentPort?.postMessage({ started: true } satisfies LoadMessage);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: request.url,
        connections: request.connections,
        duration: request.seconds,
        headers: request.headers,
        ...(request.scenario === 'create-delete'
          ? { requests: createThenDelete(new URL(request.url).pathname) }
          : {}),
      },
      (err: Error | null, result: autocannon.Result) => {
        const cpuAfter = threadCpuMs();
        const cpuMs =
          cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
        if (err) reject(err);
        else {
          // autocannon's own duration is in whole seconds; this is the counted part's.
          const seconds = (performance.now() - startedAt - settleMs) / 1000;
          const run = { latencies, answered, statuses, result, seconds };
          resolve({ ...run, ...(cpuMs === undefined ? {} : { cpuMs }) });
        }
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
      if (statusCode < 200 || statusCode >= 300) return;
      answered += 1;
      if (performance.now() - startedAt >= settleMs) latencies.push(responseTime);
    });
  });
}

/** A run's sample; a run with errors or non-2xx answers measured something else, and fails. */
function sampleOf({ latencies, answered, statuses, result, seconds, cpuMs }: Run): LoadSample {
  const failures = [...statuses].filter(([status]) => status < 200 || status >= 300);
  if (result.errors > 0 || failures.length > 0 || latencies.length === 0) {
    const byStatus = [...statuses].map(([status, count]) => `${status}: ${count}`).join(', ');
    throw new Error(
      `load run was not clean: ${result.errors} errors (${result.timeouts} timeouts), ` +
        `answers ${byStatus || 'none'}`,
    );
  }
  return {
    latencies,
    seconds,
    answered,
    ...(cpuMs === undefined ? {} : { loadCpuMs: cpuMs }),
  };
}

async function main(): Promise<LoadMessage> {
  try {
    return { ok: true, sample: sampleOf(await load(workerData as LoadRequest)) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

parentPort?.postMessage(await main());
