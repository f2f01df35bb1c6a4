import pg from 'pg';

/** The superuser of every cluster pgcloud makes with initdb: fixed, whatever the OS user is called. */
export const SUPERUSER = 'postgres';

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
  const config = { host: address.socketDir, port: address.port, user: SUPERUSER, database };
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
