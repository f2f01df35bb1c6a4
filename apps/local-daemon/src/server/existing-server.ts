import pg from 'pg';
import { CATALOG_SEARCH_PATH } from '@pgcloud/postgres';
import type { ServerAccess, ServerLogin } from './server-access.js';

const CONNECT_TIMEOUT_MS = 5000;

/**
 * An existing server named by DAEMON_DATABASE_URL. The URL's role does all the daemon's
 * work and is the login clients get; new databases are its own. The daemon starts and
 * stops nothing there.
 */
export async function openExistingServer(databaseUrl: string): Promise<ServerAccess> {
  const url = new URL(databaseUrl);
  const login: ServerLogin = {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
  const session = (database: string): pg.ClientConfig => ({
    ...login,
    database,
    // The daemon's own sessions read tenants' databases as the owner's peer: catalog first.
    options: CATALOG_SEARCH_PATH,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  const maintenanceDatabase = decodeURIComponent(url.pathname.slice(1)) || 'postgres';
  const client = new pg.Client(session(maintenanceDatabase));
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    const where = `${login.user}@${login.host}:${login.port}/${maintenanceDatabase}`;
    throw new Error(`DAEMON_DATABASE_URL: cannot log in as ${where}: ${(err as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
  return {
    session,
    maintenanceDatabase,
    login,
    description: `the server at ${login.host}:${login.port} as ${login.user}`,
    close: () => Promise.resolve(),
  };
}
