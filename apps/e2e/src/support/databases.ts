import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { ConnectionDetails, Database } from '@pgcloud/contracts';
import type { SocketAddress } from '@pgcloud/postgres';
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

/**
 * Runs statements one after another in one session, each its own transaction unless the
 * statements open one; stops at the first error, which rejects.
 */
export async function psqlSession(
  connectionString: string,
  statements: string[],
  timeoutMs = 20_000,
): Promise<string> {
  const args = [connectionString, '-XAt', '-v', 'ON_ERROR_STOP=1'];
  for (const statement of statements) args.push('-c', statement);
  const { stdout } = await promisify(execFile)('psql', args, { timeout: timeoutMs });
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

/** Every directory under DATA_DIR whose name is one of the server ids. */
export function serverDirs(dataDir: string, depth = 3): string[] {
  if (depth < 0 || !existsSync(dataDir)) return [];
  return readdirSync(dataDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [
      ...(entry.name.startsWith('srv_') ? [entry.name] : []),
      ...serverDirs(join(dataDir, entry.name), depth - 1),
    ]);
}

/** The postmaster.pid of a database's server (its id in the path), or undefined. */
function postmasterFile(dir: string, serverId: string, depth = 5): string | undefined {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name === 'postmaster.pid' && path.includes(serverId)) return path;
    if (entry.isDirectory() && depth > 0) {
      const found = postmasterFile(path, serverId, depth - 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** The lines of a running server's postmaster.pid: pid, data dir, start, port, socket dir. */
function postmasterLines(dataDir: string, serverId: string): string[] {
  const file = postmasterFile(dataDir, serverId);
  if (!file) throw new Error(`no postmaster.pid of ${serverId} under ${dataDir}`);
  return readFileSync(file, 'utf8').split('\n');
}

/**
 * How many times a local server has started: its log (beside its data directory) says
 * "ready to accept connections" at each start.
 */
export function serverStarts(dataDir: string, serverId: string): number {
  const file = postmasterFile(dataDir, serverId);
  if (!file) throw new Error(`no postmaster.pid of ${serverId} under ${dataDir}`);
  const log = readFileSync(join(dirname(dirname(file)), 'postgresql.log'), 'utf8');
  return log.split('database system is ready to accept connections').length - 1;
}

/** The pid of a server's main process. */
export function postmasterPid(dataDir: string, serverId: string): number {
  return Number(postmasterLines(dataDir, serverId)[0]);
}

/** Where the operator's superuser reaches a server: its socket (trust, PostgreSQL's OS user). */
export function superuserAddress(dataDir: string, serverId: string): SocketAddress {
  const lines = postmasterLines(dataDir, serverId);
  return { port: Number(lines[3]), socketDir: lines[4] ?? '' };
}
