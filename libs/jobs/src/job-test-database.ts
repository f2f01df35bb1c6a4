import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { ensureMetadataSchema, quoteIdent } from '@pgcloud/postgres';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { JobRunnerOptions } from './job-runner.js';
import { JobRunner } from './job-runner.js';
import { jobsTableSql } from './jobs-table.js';

// Test support for this package's integration specs; not exported from the package. It sets
// up its own database here because type:lib packages may not depend on @pgcloud/testing.

const BASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/pgcloud';

/** The owner's schema in the test database. */
export const SCHEMA = 'owner';

/** A jobs row as the integration specs check it. */
export interface JobRow {
  id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  locked_by: string | null;
  updated_at: Date;
}

/** Keeps what the runner logs, so a test can check that payloads never reach the logs. */
export class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (message: unknown): void => void this.lines.push(String(message));
  error = (message: unknown): void => void this.lines.push(String(message));
  warn = (message: unknown): void => void this.lines.push(String(message));
  debug = (message: unknown): void => void this.lines.push(String(message));

  /** True once a line containing `text` was logged. */
  has(text: string): boolean {
    return this.lines.some((line) => line.includes(text));
  }
}

/** A promise resolved from outside, which can be polled. */
export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  settled: () => boolean;
}

/** A new Deferred. */
export function deferred(): Deferred {
  let resolve!: () => void;
  let settled = false;
  const promise = new Promise<void>((done) => (resolve = done)).then(() => void (settled = true));
  return { promise, resolve, settled: () => settled };
}

/** Polls until `check` holds, failing the test after timeoutMs. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 8000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * A database of its own (pgcloud_test_jobs_<random>) with the jobs table and an owner's
 * records table, the runners started on it, and a drop() that leaves nothing behind.
 */
export class JobTestDatabase {
  readonly logs = new CapturingLogger();
  readonly dataSource: DataSource;
  private readonly database = `pgcloud_test_jobs_${randomBytes(4).toString('hex')}`;
  private readonly url = new URL(BASE_URL);
  private readonly runners: JobRunner[] = [];
  private readonly releases: (() => void)[] = [];

  constructor() {
    this.url.pathname = `/${this.database}`;
    // Like a service's: its schema is where enqueue() finds the jobs table.
    this.dataSource = new DataSource({
      type: 'postgres',
      url: this.url.toString(),
      schema: SCHEMA,
    });
  }

  /** Creates the database, the schema and the tables. */
  async create(): Promise<void> {
    Logger.overrideLogger(this.logs);
    await ensureMetadataSchema(this.url.toString(), SCHEMA);
    await this.dataSource.initialize();
    await this.dataSource.query(jobsTableSql(SCHEMA));
    await this.dataSource.query(
      `CREATE TABLE ${SCHEMA}.records (key text PRIMARY KEY, status text, reason text)`,
    );
  }

  /** Stops the runners, releases hung handlers and drops the database. */
  async drop(): Promise<void> {
    await Promise.all(this.runners.map((runner) => runner.stop()));
    for (const release of this.releases) release();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    const maintenance = new URL(BASE_URL);
    maintenance.pathname = '/postgres';
    const client = new pg.Client({ connectionString: maintenance.toString() });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(this.database)} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }

  /** A Deferred that drop() resolves in case the test did not, so no handler stays hung. */
  hang(): Deferred {
    const hung = deferred();
    this.releases.push(hung.resolve);
    return hung;
  }

  /** Starts a runner on the test table, quick to poll and to retry; drop() stops it. */
  runner(options: Partial<JobRunnerOptions> & Pick<JobRunnerOptions, 'handlers'>): JobRunner {
    const runner = new JobRunner({
      dataSource: this.dataSource,
      schema: SCHEMA,
      workerId: `worker-${this.runners.length}`,
      pollIntervalMs: 50,
      backoff: () => 50,
      ...options,
    });
    this.runners.push(runner);
    runner.start();
    return runner;
  }

  /** The newest job of that type and key. */
  async job(type: string, key: string): Promise<JobRow> {
    const rows = await this.dataSource.query<JobRow[]>(
      `SELECT id, status, attempts, last_error, locked_by, updated_at FROM ${SCHEMA}.jobs
       WHERE type = $1 AND key = $2 ORDER BY created_at DESC LIMIT 1`,
      [type, key],
    );
    assert.ok(rows[0], `job ${type} ${key} exists`);
    return rows[0];
  }

  /** How many jobs of that type there are, in that status if given. */
  async jobCount(type: string, status?: string): Promise<number> {
    const rows = await this.dataSource.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM ${SCHEMA}.jobs
       WHERE type = $1 AND status = coalesce($2, status)`,
      [type, status ?? null],
    );
    return rows[0]?.count ?? 0;
  }

  /** A check for waitFor: the job has that status. */
  statusIs(type: string, key: string, status: string): () => Promise<boolean> {
    return async () => (await this.job(type, key)).status === status;
  }

  /** Moves a running job's lease into the past, as if its worker had died long ago. */
  async expireLease(type: string, key: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${SCHEMA}.jobs SET lease_until = now() - interval '1 second'
       WHERE type = $1 AND key = $2 AND status = 'running'`,
      [type, key],
    );
  }
}
