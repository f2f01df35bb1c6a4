import { SUPERUSER } from '@pgcloud/postgres';
import pg from 'pg';
import type { ServerEndpoint } from '../database-driver.js';

/** How the driver logs in to a server as its superuser: over TLS, through its Service. */
export interface SuperuserLogin {
  endpoint: ServerEndpoint;
  password: string;
  caPem: string;
}

/**
 * Runs `work` in a superuser session (database `postgres`) over TLS, the certificate
 * verified against the deployment CA and the endpoint's host (verify-full).
 */
export async function withTlsSuperuser<T>(
  login: SuperuserLogin,
  timeoutMs: number,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    host: login.endpoint.host,
    port: login.endpoint.port,
    user: SUPERUSER,
    password: login.password,
    database: 'postgres',
    ssl: { ca: login.caPem, rejectUnauthorized: true },
    connectionTimeoutMillis: timeoutMs,
    // A server that accepts the connection and then hangs must not hold its caller for ever.
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
