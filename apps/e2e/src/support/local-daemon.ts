import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import type { LocalConnection } from '@pgcloud/contracts';
import type { ApiResponse } from '@pgcloud/testing';
import { eventually } from '@pgcloud/testing';
import pg from 'pg';

/**
 * One request with a Host header of our choosing: fetch always sends the URL's own, so
 * this goes through node:http, as a browser tricked by DNS rebinding would arrive.
 */
export function requestWithHost(
  baseUrl: string,
  host: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<ApiResponse> {
  const url = new URL(path, baseUrl);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { host };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            if (typeof value === 'string') answerHeaders.set(name, value);
          const text = Buffer.concat(chunks).toString('utf8');
          const isJson = answerHeaders.get('content-type')?.includes('application/json') ?? false;
          resolve({
            status: res.statusCode ?? 0,
            headers: answerHeaders,
            body: isJson ? (JSON.parse(text) as unknown) : text,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs SQL over a connection string as a user would, and answers the rows. */
export async function sql<T extends pg.QueryResultRow>(
  connectionString: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A session that stays open until closed: a user's psql left connected. */
export async function openSession(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  return client;
}

/** Every database of the server (name and oid), read as the login role from `postgres`. */
export async function serverDatabases(connection: LocalConnection): Promise<string[]> {
  const url = new URL(connection.connectionString);
  url.pathname = '/postgres';
  const rows = await sql<{ datname: string; oid: number }>(
    url.toString(),
    'SELECT datname, oid FROM pg_database ORDER BY datname',
  );
  return rows.map((row) => `${row.datname}:${row.oid}`);
}

/**
 * A log file's text once it has stopped growing: a process's output reaches its file
 * through a pipe a moment after the answer to the request that made it, and a read right
 * after the answer may miss its last lines.
 */
export async function settledLog(file: string, quietMs = 1000): Promise<string> {
  let before: string | undefined;
  return eventually(
    async () => {
      const text = await readFile(file, 'utf8');
      const settled = text === before;
      before = text;
      assert.ok(settled, `${file} is still being written`);
      return text;
    },
    { timeoutMs: 30_000, intervalMs: quietMs },
  );
}
