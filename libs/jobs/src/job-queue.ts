import { randomInt } from 'node:crypto';
import { configuredSchema, jobsTable } from './jobs-table.js';
import type { SqlExecutor } from './job.types.js';
import { queryRows } from '@pgcloud/postgres';

/** A job to add: its type picks the handler; (type, key) dedupes unfinished jobs. */
export interface EnqueueOptions {
  type: string;
  key: string;
  /** Stored as jsonb and never logged, since it may hold secrets. */
  payload: unknown;
  maxAttempts?: number;
  /** Not before this time; now when left out. */
  runAt?: Date;
  /** The schema of the jobs table; by default the one the executor's DataSource is set to. */
  schema?: string;
}

const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const ID_BODY_LENGTH = 20;

/** A new job id: `job_` and 20 random characters of [0-9a-z], like the other pgcloud ids. */
export function newJobId(): string {
  let body = '';
  for (let i = 0; i < ID_BODY_LENGTH; i++) body += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return `job_${body}`;
}

/**
 * Adds a job; pass the owner's transaction so the job commits (or rolls back) with the
 * record it moves on. Resolves false when an unfinished job of that type and key exists.
 */
export async function enqueue(executor: SqlExecutor, options: EnqueueOptions): Promise<boolean> {
  const { type, key, payload, maxAttempts = 5, runAt } = options;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new RangeError('maxAttempts must be a positive integer');
  const schema = options.schema ?? configuredSchema(executor, 'enqueue');
  // ON CONFLICT names the partial unique index's columns and predicate, so a duplicate
  // unfinished (type, key) is skipped, while finished jobs of that key do not block.
  const sql = `
    INSERT INTO ${jobsTable(schema)} (id, type, key, payload, max_attempts, run_at)
    VALUES ($1, $2, $3, $4::jsonb, $5, COALESCE($6::timestamptz, now()))
    ON CONFLICT (type, key) WHERE status IN ('queued', 'running') DO NOTHING
    RETURNING id`;
  // Serialised here: pg would turn a top-level array into a PostgreSQL array, not JSON.
  const json = JSON.stringify(payload ?? null);
  const values = [newJobId(), type, key, json, maxAttempts, runAt ?? null];
  const added = await queryRows<{ id: string }>(executor, sql, values);
  return added.length === 1;
}

/**
 * Makes a queued job due now (one enqueued with a later runAt, held back while its
 * owner prepared something); answers false when no such job waits.
 */
export async function runNow(
  executor: SqlExecutor,
  options: { type: string; key: string; schema?: string },
): Promise<boolean> {
  const schema = options.schema ?? configuredSchema(executor, 'runNow');
  const sql = `
    UPDATE ${jobsTable(schema)} SET run_at = now()
     WHERE type = $1 AND key = $2 AND status = 'queued' AND run_at > now()
    RETURNING id`;
  const moved = await queryRows<{ id: string }>(executor, sql, [options.type, options.key]);
  return moved.length === 1;
}
