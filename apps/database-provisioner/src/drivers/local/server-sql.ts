import { quoteIdent, quoteLiteral, scramSha256Verifier } from '@pgcloud/postgres';
import pg from 'pg';
import { REPLICATION_ROLE } from '../database-driver.js';
import { SUPERUSER } from './cluster-template.js';

/** A server as its unix socket reaches it. */
export interface SocketAddress {
  socketDir: string;
  port: number;
}

/** The roles and database a server is made for. */
export interface ApplicationRoles {
  databaseName: string;
  password: string;
  replicationPassword: string;
}

const DUPLICATE_OBJECT = '42710';
const DUPLICATE_DATABASE = '42P04';

/** Whether the server answers `SELECT 1` on its socket within the timeout. */
export async function answers(address: SocketAddress, timeoutMs = 2000): Promise<boolean> {
  return withSuperuser(address, timeoutMs, async (client) => {
    await client.query('SELECT 1');
  }).then(
    () => true,
    () => false,
  );
}

/**
 * Creates what is missing of the login role, its database, and the replication role,
 * and closes the maintenance databases to everyone else. Passwords reach the server
 * only as SCRAM verifiers, so they never show up in its log (a failed CREATE ROLE logs
 * its statement); an existing role keeps its password, so a retried create changes
 * nothing.
 */
export async function ensureApplicationRoles(
  address: SocketAddress,
  roles: ApplicationRoles,
): Promise<void> {
  const name = quoteIdent(roles.databaseName);
  await withSuperuser(address, 10_000, async (client) => {
    await ensureRole(client, roles.databaseName, 'LOGIN', roles.password);
    await ensureRole(client, REPLICATION_ROLE, 'REPLICATION LOGIN', roles.replicationPassword);
    const database = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      roles.databaseName,
    ]);
    if (database.rowCount === 0) {
      await ignoring(DUPLICATE_DATABASE, client.query(`CREATE DATABASE ${name} OWNER ${name}`));
    }
    // The application sees only its own database.
    await client.query('REVOKE CONNECT ON DATABASE postgres FROM PUBLIC');
    await client.query('REVOKE CONNECT ON DATABASE template1 FROM PUBLIC');
  });
}

async function ensureRole(
  client: pg.Client,
  role: string,
  attributes: string,
  password: string,
): Promise<void> {
  const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
  if (found.rowCount !== 0) return;
  const verifier = quoteLiteral(scramSha256Verifier(password));
  await ignoring(
    DUPLICATE_OBJECT,
    client.query(`CREATE ROLE ${quoteIdent(role)} ${attributes} PASSWORD ${verifier}`),
  );
}

/** Runs work in a superuser session over the socket (trusted: only the OS user reaches it). */
export async function withSuperuser<T>(
  address: SocketAddress,
  timeoutMs: number,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    host: address.socketDir,
    port: address.port,
    user: SUPERUSER,
    database: 'postgres',
    connectionTimeoutMillis: timeoutMs,
    // A server that accepts the connection and then hangs must not hold reconcile or a job.
    query_timeout: 60_000,
  });
  client.on('error', () => undefined); // a server going away mid-session rejects the query
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

// Two creates of one server at once both see "absent"; the loser's duplicate is success.
async function ignoring(code: string, query: Promise<unknown>): Promise<void> {
  await query.catch((err: { code?: string }) => {
    if (err.code !== code) throw err;
  });
}
