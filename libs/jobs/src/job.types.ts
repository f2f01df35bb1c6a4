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
 * Why a job was given up on. `kind` is for the owner to act on, never parsed from text: a
 * PermanentJobError's own kind, or one of JOB_FAILURE_KINDS. `reason` is the detail, for
 * the log (it may name paths and tool output).
 */
export interface JobFailure {
  kind: string;
  reason: string;
}

/** The kinds the runner gives a failure itself. */
export const JOB_FAILURE_KINDS = {
  /** A PermanentJobError thrown without a kind of its own. */
  permanent: 'permanent',
  /** Every attempt threw. */
  exhausted: 'exhausted',
  /** The last attempts' workers died (stopped renewing the lease). */
  abandoned: 'abandoned',
  /** No handler for the job's type in this runner. */
  unhandled: 'unhandled',
} as const;

/**
 * Called once a job is given up on, inside the transaction that marks it failed: update
 * the owner's record through `manager` so both commit together. If it throws, both roll
 * back and the job is failed again once its lease lapses.
 */
export type OnJobFailed = (
  job: FailedJob,
  failure: JobFailure,
  manager: EntityManager,
) => Promise<void>;
