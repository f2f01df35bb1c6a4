import { setTimeout as delay } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { quoteIdent } from '@pgcloud/postgres';
import type { DatabaseIdentity } from '../catalogue/catalogue.js';
import { ManagedServer } from '../server/managed-server.js';
import { PULL_NAME_PATTERN } from '../pulls/pull-names.js';

/** A database on the server, with its size in bytes. */
export interface ServerDatabase extends DatabaseIdentity {
  size: number;
}

const IDLE_GRACE_MS = 1000;
const IDLE_POLL_MS = 50;

// What a session of the daemon's role may use: databases that take connections and
// grant it CONNECT, but for one a pull is still filling (pulls/archive-pulls.ts).
// pg_database_size is NULL for one dropped since the snapshot.
const USABLE_DATABASES = `
  SELECT oid, datname AS name, coalesce(pg_database_size(oid), 0)::text AS size
  FROM pg_database
  WHERE datallowconn AND has_database_privilege(oid, 'CONNECT')
    AND datname !~ '${PULL_NAME_PATTERN}'
    AND NOT (datname = ANY($1::text[]))`;

/**
 * The server's databases as a whole: reading pg_database, CREATE DATABASE and DROP
 * DATABASE, in the daemon's sessions. Names reach SQL as bind parameters, or quoted
 * as identifiers where PostgreSQL takes no parameters.
 */
@Injectable()
export class ServerDatabases {
  constructor(private readonly server: ManagedServer) {}

  /** Every usable database but the `hidden` ones, by name. */
  async usable(hidden: readonly string[]): Promise<ServerDatabase[]> {
    const rows = await this.server.query<Row>(`${USABLE_DATABASES} ORDER BY datname`, [hidden]);
    return rows.map(toDatabase);
  }

  /** One usable database that is not `hidden`, when there is one of that name. */
  async find(name: string, hidden: readonly string[]): Promise<ServerDatabase | undefined> {
    const rows = await this.server.query<Row>(`${USABLE_DATABASES} AND datname = $2`, [
      hidden,
      name,
    ]);
    return rows.map(toDatabase)[0];
  }

  /** Whether the server has a database of that name at all. */
  async exists(name: string): Promise<boolean> {
    const rows = await this.server.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rows.length > 0;
  }

  /**
   * True when the database has no session that would make CREATE DATABASE ... TEMPLATE
   * fail; autovacuum workers do not count, PostgreSQL ends them. A client that has just
   * disconnected leaves its session for a few milliseconds more, so a busy database is
   * looked at again for up to `graceMs` before it counts as in use.
   */
  async idle(name: string, graceMs = IDLE_GRACE_MS): Promise<boolean> {
    const deadline = Date.now() + graceMs;
    for (;;) {
      const rows = await this.server.query<{ sessions: number }>(
        `SELECT count(*)::int AS sessions FROM pg_stat_activity
         WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type <> 'autovacuum worker'`,
        [name],
      );
      if ((rows[0]?.sessions ?? 0) === 0) return true;
      if (Date.now() >= deadline) return false;
      await delay(IDLE_POLL_MS);
    }
  }

  /**
   * CREATE DATABASE as a file copy of `template` (PostgreSQL 15's FILE_COPY strategy:
   * a checkpoint and a copy of the files, rather than WAL for every block), owned by
   * `owner` when given.
   */
  async create(name: string, template: string, owner?: string): Promise<void> {
    const ownedBy = owner === undefined ? '' : ` OWNER ${quoteIdent(owner)}`;
    await this.server.query(
      `CREATE DATABASE ${quoteIdent(name)}${ownedBy} TEMPLATE ${quoteIdent(template)} STRATEGY FILE_COPY`,
    );
  }

  /**
   * A copy of `source` that takes no connections (so no list shows it and nobody changes
   * it), owned by the daemon's session role: a snapshot, or a reset's copy of one.
   */
  async copyClosed(name: string, source: string, owner?: string): Promise<number> {
    const ownedBy = owner === undefined ? '' : ` OWNER ${quoteIdent(owner)}`;
    await this.server.query(
      `CREATE DATABASE ${quoteIdent(name)}${ownedBy} TEMPLATE ${quoteIdent(source)}
         STRATEGY FILE_COPY ALLOW_CONNECTIONS false`,
    );
    const rows = await this.server.query<{ oid: number }>(
      'SELECT oid FROM pg_database WHERE datname = $1',
      [name],
    );
    return Number(rows[0]?.oid);
  }

  /** Gives a closed copy its database's name, and opens it to connections. */
  async open(copy: string, name: string): Promise<void> {
    await this.server.query(`ALTER DATABASE ${quoteIdent(copy)} RENAME TO ${quoteIdent(name)}`);
    await this.server.query(`ALTER DATABASE ${quoteIdent(name)} ALLOW_CONNECTIONS true`);
  }

  /** DROP DATABASE, ending its open sessions first. */
  async drop(name: string): Promise<void> {
    await this.server.query(`DROP DATABASE ${quoteIdent(name)} WITH (FORCE)`);
  }

  /** DROP DATABASE IF EXISTS: a copy that may not have been made. */
  async dropIfExists(name: string): Promise<void> {
    await this.server.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  }
}

interface Row {
  oid: number;
  name: string;
  size: string;
}

function toDatabase(row: Row): ServerDatabase {
  return { oid: Number(row.oid), name: row.name, size: Number(row.size) };
}
