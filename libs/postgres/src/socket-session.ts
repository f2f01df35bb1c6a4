import pg from 'pg';

/** The superuser of every cluster pgcloud makes with initdb: fixed, whatever the OS user is called. */
export const SUPERUSER = 'postgres';

/**
 * Startup options of every session pgcloud opens with a superuser (or any role it does
 * its own work as) on a server whose databases tenants own: names resolve in PostgreSQL's
 * own catalog only, then the session's temporary schema (never searched for functions or
 * operators). Given at connect, they win over a `search_path` the database's owner set on
 * the database, so an operator or function a tenant planted in `public` never runs with
 * the session's rights. What such a session reads of its own must name its schema.
 */
export const CATALOG_SEARCH_PATH = '-c search_path=pg_catalog,pg_temp';

/** A local server as its unix socket reaches it. */
export interface SocketAddress {
  socketDir: string;
  port: number;
}

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
 * Runs work in a superuser session over the socket: trusted, because the socket's
 * directory is 0700 and only the OS user and root reach it.
 */
export async function withSuperuser<T>(
  address: SocketAddress,
  timeoutMs: number,
  work: (client: pg.Client) => Promise<T>,
  database = 'postgres',
): Promise<T> {
  const config = {
    host: address.socketDir,
    port: address.port,
    user: SUPERUSER,
    database,
    options: CATALOG_SEARCH_PATH,
  };
  return withSession({ ...config, connectionTimeoutMillis: timeoutMs }, work);
}

/**
 * Runs `work` in one session made from `config`, always ended after; a query hangs for at
 * most a minute (a server that accepts the connection and then hangs must not hold its
 * caller for ever).
 */
export async function withSession<T>(
  config: pg.ClientConfig,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ query_timeout: 60_000, ...config });
  client.on('error', () => undefined); // a server going away mid-session rejects the query
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
