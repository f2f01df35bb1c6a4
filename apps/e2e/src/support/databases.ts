import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ConnectionDetails, Database } from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { canConnect } from '@pgcloud/testing';
import pg from 'pg';
import { expectData } from './assertions.js';
import { sleep } from './device-flow.js';

/** Polls a database until its status is one of `statuses`, and answers it. */
export async function waitForStatus(
  api: ApiClient,
  projectId: string,
  name: string,
  statuses: string[],
  timeoutMs = 60_000,
): Promise<Database> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const database = expectData<Database>(
      await api.get(`/projects/${projectId}/databases/${name}`),
      200,
    );
    if (statuses.includes(database.status)) return database;
    if (Date.now() > deadline)
      throw new Error(`${name} is still ${database.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Creates a database and waits until it runs; answers it with its connection details. */
export async function runningDatabase(
  api: ApiClient,
  projectId: string,
  name: string,
  config?: Record<string, number>,
): Promise<{ database: Database; connection: ConnectionDetails }> {
  expectData(
    await api.post(`/projects/${projectId}/databases`, { name, ...(config ? { config } : {}) }),
    201,
  );
  const database = await waitForStatus(api, projectId, name, ['running', 'failed']);
  if (database.status !== 'running') throw new Error(`${name} failed: ${database.error ?? '?'}`);
  const connection = expectData<ConnectionDetails>(
    await api.get(`/projects/${projectId}/databases/${name}/url`),
    200,
  );
  return { database, connection };
}

/**
 * A node-postgres client as a careful user makes one: the server verified against the
 * deployment's CA (verify-full), whatever sslmode the connection string names.
 */
export function verifiedClient(connectionString: string, caPem: string): pg.Client {
  const url = new URL(connectionString);
  url.searchParams.delete('sslmode');
  return new pg.Client({
    connectionString: url.toString(),
    ssl: { ca: caPem, rejectUnauthorized: true },
  });
}

/** Runs SQL with a verified client and answers the rows. */
export async function query<T extends pg.QueryResultRow>(
  connectionString: string,
  caPem: string,
  text: string,
): Promise<T[]> {
  const client = verifiedClient(connectionString, caPem);
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** psql with the connection string exactly as given; answers its unaligned output. */
export async function psql(
  connectionString: string,
  sql: string,
  timeoutMs = 20_000,
): Promise<string> {
  const { stdout } = await promisify(execFile)('psql', [connectionString, '-XAtc', sql], {
    timeout: timeoutMs,
  });
  return stdout.trim();
}

/** Waits until nothing answers on the port any more. */
export async function waitUntilClosed(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await canConnect('127.0.0.1', port, 500)) {
    if (Date.now() > deadline) throw new Error(`port ${port} still answers`);
    await sleep(200);
  }
}
