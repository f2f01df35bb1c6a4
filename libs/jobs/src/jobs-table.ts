import { quoteIdent } from '@pgcloud/postgres';
import type { SqlExecutor } from './job.types.js';

/** The schema-qualified, quoted name of a service's jobs table. */
export function jobsTable(schema: string): string {
  return `${quoteIdent(schema)}.jobs`;
}

/**
 * The SQL that creates a service's jobs table, for that service's own migration: each
 * service keeps its jobs beside the records they move on, so one transaction covers both.
 */
export function jobsTableSql(schema: string): string {
  const table = jobsTable(schema);
  // The partial unique index is the dedupe rule: at most one unfinished job per (type, key),
  // while finished ones stay as history. The claim index only holds unfinished rows, in the
  // claim's order, so the claim query stays cheap however much history piles up.
  return `
    CREATE TABLE ${table} (
      id           text PRIMARY KEY,
      type         text NOT NULL,
      key          text NOT NULL,
      payload      jsonb NOT NULL,
      status       text NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued', 'running', 'done', 'failed')),
      attempts     integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      max_attempts integer NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
      run_at       timestamptz NOT NULL DEFAULT now(),
      lease_until  timestamptz,
      locked_by    text,
      last_error   text,
      created_at   timestamptz NOT NULL DEFAULT now(),
      updated_at   timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX jobs_unfinished_type_key ON ${table} (type, key)
      WHERE status IN ('queued', 'running');
    CREATE INDEX jobs_claim ON ${table} (run_at, created_at)
      WHERE status IN ('queued', 'running')`;
}

/** The SQL that drops a service's jobs table, for the down step of its migration. */
export function dropJobsTableSql(schema: string): string {
  return `DROP TABLE ${jobsTable(schema)}`;
}

/** The schema the executor's DataSource puts its tables in: where its service's jobs live. */
export function configuredSchema(executor: SqlExecutor, caller: string): string {
  const dataSource = 'dataSource' in executor ? executor.dataSource : executor;
  const { options } = dataSource;
  const schema = 'schema' in options ? options.schema : undefined;
  if (typeof schema !== 'string' || schema === '')
    throw new Error(`${caller} needs a schema: set it in the options or on the DataSource`);
  return schema;
}
