import type { DataSource, EntityManager } from 'typeorm';

/** Where SQL runs: an owner's transaction (EntityManager) or its DataSource. */
export type SqlExecutor = EntityManager | DataSource;

/** A job as its handler sees it; `payload` comes back from the database as JSON. */
export interface Job<P = unknown> {
  id: string;
  type: string;
  key: string;
  payload: P;
  /** 1 on the first run. */
  attempt: number;
  /** Aborted when this worker lost the job's lease or stopped: stop working and throw. */
  signal: AbortSignal;
}

/** Does one job's work; resolves when done, throws to retry (or PermanentJobError to fail). */
export type JobHandler = (job: Job) => Promise<void>;

/** A job given up on, as onFailed sees it; `attempt` is the number of attempts that ran. */
export type FailedJob<P = unknown> = Omit<Job<P>, 'signal'>;

/**
 * Called once a job is given up on, inside the transaction that marks it failed: update
 * the owner's record through `manager` so both commit together. If it throws, both roll
 * back and the job is failed again once its lease lapses.
 */
export type OnJobFailed = (job: FailedJob, reason: string, manager: EntityManager) => Promise<void>;
