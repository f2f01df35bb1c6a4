import type { OnApplicationShutdown } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { LocalConnection } from '@pgcloud/contracts';
import pg from 'pg';
import type { DaemonConfig } from '../config.js';
import { openEmbeddedServer } from './embedded-server.js';
import { openExistingServer } from './existing-server.js';
import type { ServerAccess } from './server-access.js';
import { connectionDetails } from './server-access.js';

// A few sessions on the catalogue database do the daemon's own work; sessions in the
// users' databases are opened per request and closed at once, so an idle daemon never
// holds a database that someone wants to use as a template.
const POOL_SIZE = 4;
const POOL_IDLE_MS = 10_000;
const QUERY_TIMEOUT_MS = 60_000;

/** The embedded server, or the existing one DAEMON_DATABASE_URL names. */
export function openServerAccess(config: DaemonConfig): Promise<ServerAccess> {
  if (config.DAEMON_DATABASE_URL !== undefined)
    return openExistingServer(config.DAEMON_DATABASE_URL);
  return openEmbeddedServer({
    dataDir: config.dataDir,
    port: config.DAEMON_PG_PORT,
    pgBinDir: config.pgBinDir,
    osUserName: config.PG_OS_USER,
  });
}

/** The server the daemon manages: sessions for its work, and what clients connect with. */
export class ManagedServer implements OnApplicationShutdown {
  private readonly logger = new Logger('ManagedServer');
  private readonly pool: pg.Pool;

  constructor(
    private readonly access: ServerAccess,
    /** The daemon's own database: its catalogue, and where its server-wide statements run. */
    readonly catalogueDatabase: string,
  ) {
    this.pool = new pg.Pool({
      ...access.session(catalogueDatabase),
      max: POOL_SIZE,
      idleTimeoutMillis: POOL_IDLE_MS,
      query_timeout: QUERY_TIMEOUT_MS,
    });
    // An idle session the server ends (a restart) must not crash the daemon.
    this.pool.on('error', (err) => this.logger.warn(`idle session ended: ${err.message}`));
  }

  /** Runs one statement in the catalogue database; server-wide statements run here too. */
  async query<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]> {
    return (await this.pool.query<T>(text, values)).rows;
  }

  /** Runs work in a session of its own in `database`, closed straight after. */
  async withSession<T>(database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({
      ...this.access.session(database),
      query_timeout: QUERY_TIMEOUT_MS,
    });
    client.on('error', () => undefined); // a session ended under us rejects its query
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * The daemon's session in `database` as libpq's environment, for PostgreSQL's own tools
   * (pg_restore): the password, when there is one, goes in PGPASSWORD, never an argument.
   */
  libpqEnv(database: string): Record<string, string> {
    const session = this.access.session(database);
    return {
      PGHOST: String(session.host),
      PGPORT: String(session.port),
      PGUSER: String(session.user),
      PGDATABASE: database,
      PGCONNECT_TIMEOUT: '10',
      ...(typeof session.password === 'string' ? { PGPASSWORD: session.password } : {}),
    };
  }

  /** A database the daemon may connect to before its catalogue exists. */
  get maintenanceDatabase(): string {
    return this.access.maintenanceDatabase;
  }

  /** The role named as OWNER of the databases the daemon creates, when not the sessions' own. */
  get owner(): string | undefined {
    return this.access.owner;
  }

  get description(): string {
    return this.access.description;
  }

  /** How clients reach `database`: the login role, with its password. */
  connection(database: string): LocalConnection {
    return connectionDetails(this.access.login, database);
  }

  /** Closes the daemon's sessions, then stops the embedded server (not an existing one). */
  async onApplicationShutdown(): Promise<void> {
    await this.pool.end().catch(() => undefined);
    await this.access.close();
  }
}
