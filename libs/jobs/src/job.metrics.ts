import { Counter, Gauge, Histogram } from 'prom-client';

/*
 * The job runner's metrics, on prom-client's default registry (served on the management
 * port). Labels stay few: `type` is a job type, one of the handful each service's runners
 * handle (a runner claims only the types it has handlers for), and `kind` a failure kind
 * (JOB_FAILURE_KINDS or a handler's PermanentJobError kind), both fixed in code. Never a
 * job's id or key.
 */

/** Attempts whose handler started: one per claim that runs the job's handler. */
export const jobAttempts = new Counter({
  name: 'pgcloud_job_attempts_total',
  help: 'Job attempts started (the handler ran on a claimed job), by job type.',
  labelNames: ['type'] as const,
});

/** Attempts whose handler threw and whose job was put back to run again after a backoff. */
export const jobRetries = new Counter({
  name: 'pgcloud_job_retries_total',
  help: 'Job attempts that failed and were scheduled to run again, by job type.',
  labelNames: ['type'] as const,
});

/** Jobs given up on, counted once the failure (and the owner's onFailed) committed. */
export const jobFailures = new Counter({
  name: 'pgcloud_job_failures_total',
  help:
    'Jobs failed for good, by job type and failure kind (exhausted: every attempt threw; ' +
    'abandoned: the workers of its last attempts died; permanent or a kind of its own: ' +
    'retrying could not help; unhandled: no handler).',
  labelNames: ['type', 'kind'] as const,
});

/**
 * How long handlers ran, by how they ended: `ok`, `error` (threw; retried or failed for
 * good), `aborted` (the lease was lost or the worker stopped). From a tenth of a second
 * (a record update) to an hour (a restore replaying much WAL).
 */
export const jobAttemptSeconds = new Histogram({
  name: 'pgcloud_job_attempt_duration_seconds',
  help: 'How long job handlers ran, by job type and outcome (ok, error, aborted).',
  labelNames: ['type', 'outcome'] as const,
  buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
});

/** Queued jobs that are due and not running yet, of the types one runner handles. */
export interface JobBacklog {
  type: string;
  count: number;
  oldestSeconds: number;
}

/** The runners of this process, asked at each scrape what waits in their tables. */
const backlogSources = new Set<() => Promise<JobBacklog[]>>();

/** Reports a runner's backlog at each scrape until the answered function is called. */
export function reportBacklog(source: () => Promise<JobBacklog[]>): () => void {
  backlogSources.add(source);
  return () => backlogSources.delete(source);
}

async function backlogs(): Promise<JobBacklog[]> {
  const all = await Promise.all([...backlogSources].map((source) => source().catch(() => [])));
  return all.flat();
}

/**
 * Jobs due and waiting for a worker, and how long the oldest has waited, by job type, read
 * from the jobs table at each scrape: every replica reads the same table, so take the max.
 */
export const jobsWaiting = new Gauge({
  name: 'pgcloud_jobs_waiting',
  help: 'Queued jobs that are due and not claimed yet, by job type (the same on every replica).',
  labelNames: ['type'] as const,
  async collect() {
    this.reset();
    for (const row of await backlogs()) this.set({ type: row.type }, row.count);
  },
});

export const jobsOldestWaitingSeconds = new Gauge({
  name: 'pgcloud_jobs_oldest_waiting_seconds',
  help: 'How long the oldest due, unclaimed job has waited, by job type (the same on every replica).',
  labelNames: ['type'] as const,
  async collect() {
    this.reset();
    for (const row of await backlogs()) this.set({ type: row.type }, row.oldestSeconds);
  },
});
