import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { Client, ConnectionDetails, Database } from '@pgcloud/api-client';
import {
  createDatabase,
  createProject,
  getDatabase,
  getDatabaseUrl,
  unwrap,
} from '@pgcloud/api-client';
import pg from 'pg';
import { ApiClient, signIn } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import type { Cleanup } from './run-bench.js';

// Roomy buckets and a quick device flow: the benches poll a lot.
const BENCH_STACK_ENV = {
  RATE_LIMIT_FREE_PER_MINUTE: '100000',
  RATE_LIMIT_FREE_BURST: '10000',
  DEVICE_POLL_INTERVAL_SECONDS: '1',
  LOG_LEVEL: 'warn',
  // No automated drill (nor backup) of the bench's database while it is timed.
  DRILL_SCHEDULE_SECONDS: '3600',
  BACKUP_CHECK_INTERVAL_SECONDS: '3600',
};

/** The path parameters of a database's operations. */
export interface DatabasePath {
  project_id: string;
  name: string;
}

/** A stack of a bench's own, with one running database full of rows, and a scratch folder. */
export interface BulkDatabase {
  stack: Stack;
  /** The generated API client, signed in as the database's owner. */
  client: Client;
  /** `{ project_id, name: 'bulk' }`. */
  path: DatabasePath;
  database: Database;
  connection: ConnectionDetails;
  /** A temp folder PostgreSQL's OS user can pass through (0755), removed at the end. */
  scratchDir: string;
}

/** Reads until `done` says so, every 100 ms. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await delay(100);
  }
}

/**
 * Starts an isolated stack (with a local S3 unless S3_ENDPOINT is set), signs in, and makes
 * a database `bulk` filled with `rows` rows of md5 text that compresses about in half, like
 * real data more than zeros do (3.3 million rows: about 540 MB). `env` goes to the stack's
 * apps over the benches' settings. Everything is undone by the cleanups.
 */
export async function bulkDatabase(
  cleanups: Cleanup[],
  projectName: string,
  rows: number,
  env: Record<string, string> = {},
): Promise<BulkDatabase> {
  // The stack's readiness probes log each unanswered ping while the apps boot.
  Logger.overrideLogger(['error']);
  console.error('starting the stack (with a local S3 unless S3_ENDPOINT is set)');
  const stack = await Stack.start({
    env: { ...BENCH_STACK_ENV, ...env },
    isolated: true,
    output: 'files',
  });
  cleanups.push(() => stack.stop());
  const scratchDir = await mkdtemp(join(tmpdir(), `pgcloud-${projectName}-`));
  await chmod(scratchDir, 0o755);
  cleanups.push(() => rm(scratchDir, { recursive: true, force: true }));
  const { client } = await signIn(new ApiClient(stack.baseUrl), 'bench');
  const project = await unwrap(createProject({ client, body: { name: projectName } }));
  const path: DatabasePath = { project_id: project.id, name: 'bulk' };
  await unwrap(
    createDatabase({ client, path: { project_id: project.id }, body: { name: 'bulk' } }),
  );
  const database = await pollUntil(
    () => unwrap(getDatabase({ client, path })),
    (d) => d.status !== 'provisioning',
  );
  if (database.status !== 'running') throw new Error(`the database is ${database.status}`);
  const connection = await unwrap(getDatabaseUrl({ client, path }));
  const caPem = await (await fetch(`${stack.baseUrl}/ca.pem`)).text();
  console.error(`filling the database with ${rows} rows`);
  await fill(connection.connection_string, caPem, rows);
  return { stack, client, path, database, connection, scratchDir };
}

async function fill(connectionString: string, caPem: string, rows: number): Promise<void> {
  const url = new URL(connectionString);
  url.searchParams.delete('sslmode');
  const client = new pg.Client({ connectionString: url.toString(), ssl: { ca: caPem } });
  await client.connect();
  try {
    await client.query(`CREATE TABLE filler AS SELECT g AS id,
      md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) AS payload
      FROM generate_series(1, ${rows}) g`);
  } finally {
    await client.end();
  }
}
