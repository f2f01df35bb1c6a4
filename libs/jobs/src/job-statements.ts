import { jobsTable } from './jobs-table.js';

/** A job row as the runner claims it. */
export interface ClaimedJob {
  id: string;
  type: string;
  key: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
}

/** The runner's SQL for one jobs table. */
export interface JobStatements {
  /** $1 worker, $2 lease seconds, $3 the job types this worker handles. */
  claim: string;
  /** $1 id, $2 worker, $3 attempt, $4 lease seconds; no row when the job is no longer ours. */
  renew: string;
  /** $1 id, $2 worker, $3 attempt. */
  done: string;
  /** $1 id, $2 worker, $3 attempt, $4 reason, $5 backoff in milliseconds. */
  retry: string;
  /** $1 id, $2 worker, $3 attempt, $4 reason. */
  fail: string;
  /** $1 the job types: per type, the queued jobs due and how long the oldest has waited. */
  waiting: string;
}

/** The runner's SQL for the jobs table in `schema`. */
export function jobStatements(schema: string): JobStatements {
  const table = jobsTable(schema);
  // Every write after the claim is fenced by worker and attempt: a worker that lost its lease
  // (and the job to another worker, or to its own restarted self) can no longer touch it.
  const ours = `id = $1 AND locked_by = $2 AND attempts = $3 AND status = 'running'`;
  const release = `lease_until = NULL, locked_by = NULL, updated_at = now()`;
  return {
    // One statement, so claiming is atomic; SKIP LOCKED lets workers claim side by side. A
    // running job whose lease lapsed is claimable again: its worker died or lost the database.
    waiting: `
      SELECT type, count(*)::int AS count,
             extract(epoch FROM now() - min(run_at))::float8 AS oldest_seconds
        FROM ${table}
       WHERE status = 'queued' AND run_at <= now() AND type = ANY($1)
       GROUP BY type`,
    claim: `
      UPDATE ${table}
      SET status = 'running', locked_by = $1,
          lease_until = now() + make_interval(secs => $2::float8),
          attempts = attempts + 1, updated_at = now()
      WHERE id = (
        SELECT id FROM ${table}
        WHERE type = ANY($3::text[])
          AND ((status = 'queued' AND run_at <= now())
            OR (status = 'running' AND lease_until < now()))
        ORDER BY run_at, created_at
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING id, type, key, payload, attempts, max_attempts, last_error`,
    renew: `
      UPDATE ${table}
      SET lease_until = now() + make_interval(secs => $4::float8), updated_at = now()
      WHERE ${ours}
      RETURNING id`,
    done: `
      UPDATE ${table} SET status = 'done', ${release}
      WHERE ${ours}
      RETURNING id`,
    retry: `
      UPDATE ${table}
      SET status = 'queued', last_error = $4,
          run_at = now() + make_interval(secs => $5::float8 / 1000), ${release}
      WHERE ${ours}
      RETURNING id`,
    // A job reclaimed after its attempts ran out was counted once more by the claim; the
    // row keeps the attempts that really ran.
    fail: `
      UPDATE ${table}
      SET status = 'failed', last_error = $4, attempts = LEAST(attempts, max_attempts), ${release}
      WHERE ${ours}
      RETURNING id, type, key, payload, attempts AS attempt`,
  };
}
