import { CATALOG_SEARCH_PATH, SUPERUSER, withSession } from '@pgcloud/postgres';
import type pg from 'pg';
import type { ServerEndpoint } from '../database-driver.js';

/** How the driver logs in to a server as its superuser: over TLS, through its Service. */
export interface SuperuserLogin {
  endpoint: ServerEndpoint;
  password: string;
  caPem: string;
}

/**
 * Runs `work` in a superuser session (database `postgres`) over TLS, the certificate
 * verified against the deployment CA and the endpoint's host (verify-full), resolving
 * names in the catalog only.
 */
export async function withTlsSuperuser<T>(
  login: SuperuserLogin,
  timeoutMs: number,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  return withSession(
    {
      host: login.endpoint.host,
      port: login.endpoint.port,
      user: SUPERUSER,
      password: login.password,
      database: 'postgres',
      options: CATALOG_SEARCH_PATH,
      ssl: { ca: login.caPem, rejectUnauthorized: true },
      connectionTimeoutMillis: timeoutMs,
    },
    work,
  );
}
