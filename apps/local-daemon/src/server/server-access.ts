import type { LocalConnection } from '@pgcloud/contracts';
import { isIP } from 'node:net';
import type pg from 'pg';

/** The login clients get: the daemon's login role, over TCP. */
export interface ServerLogin {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** How the daemon reaches the one PostgreSQL server it manages, embedded or existing. */
export interface ServerAccess {
  /** Session settings for the daemon's own work in `database`. */
  session(database: string): pg.ClientConfig;
  /** A database the daemon may connect to before its catalogue exists. */
  maintenanceDatabase: string;
  login: ServerLogin;
  /** The role named as OWNER of new databases; unset when the sessions' role is the login. */
  owner?: string;
  /** What the log says about the server. */
  description: string;
  /** Stops what the daemon started (the embedded server); nothing for an existing one. */
  close(): Promise<void>;
}

/** Connection details of `database` for clients (docs/api/local-daemon.md). */
export function connectionDetails(login: ServerLogin, database: string): LocalConnection {
  const host = isIP(login.host) === 6 ? `[${login.host}]` : login.host;
  const credentials = `${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}`;
  return {
    host: login.host,
    port: login.port,
    database,
    user: login.user,
    password: login.password,
    connectionString: `postgresql://${credentials}@${host}:${login.port}/${encodeURIComponent(database)}`,
  };
}
