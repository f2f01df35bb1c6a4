import { Injectable } from '@nestjs/common';
import { ManagedServer } from '../server/managed-server.js';

/** A snapshot as the catalogue keeps it, with the copy's size on the server. */
export interface SnapshotEntry {
  name: string;
  /** The closed copy on the server that holds it. */
  serverDatabase: string;
  createdAt: Date;
  size: number;
}

const UNIQUE_VIOLATION = '23505';

/**
 * The daemon's snapshots (docs/api/local-daemon.md#snapshots), in its catalogue: a row per
 * snapshot, keyed by the oid of the database it is of (as the databases' rows are), naming
 * the closed copy on the server that holds it.
 */
@Injectable()
export class SnapshotCatalogue {
  constructor(private readonly server: ManagedServer) {}

  /** Records a snapshot before its copy is made; false when the name is taken. */
  async add(databaseOid: number, name: string, serverDatabase: string): Promise<boolean> {
    return this.server
      .query(
        'INSERT INTO public.snapshots (database_oid, name, server_database) VALUES ($1, $2, $3)',
        [databaseOid, name, serverDatabase],
      )
      .then(
        () => true,
        (err: { code?: string }) => {
          if (err.code === UNIQUE_VIOLATION) return false;
          throw err;
        },
      );
  }

  /** The database's snapshots whose copy exists, oldest first. */
  async list(databaseOid: number): Promise<SnapshotEntry[]> {
    return this.select('s.database_oid = $1', [databaseOid]);
  }

  async find(databaseOid: number, name: string): Promise<SnapshotEntry | undefined> {
    return (await this.select('s.database_oid = $1 AND s.name = $2', [databaseOid, name]))[0];
  }

  /** Every snapshot of the database, its copy made or not (to drop them all). */
  async all(databaseOid: number): Promise<string[]> {
    const rows = await this.server.query<{ server_database: string }>(
      'SELECT server_database FROM public.snapshots WHERE database_oid = $1',
      [databaseOid],
    );
    return rows.map((row) => row.server_database);
  }

  async remove(databaseOid: number, name: string): Promise<void> {
    await this.server.query('DELETE FROM public.snapshots WHERE database_oid = $1 AND name = $2', [
      databaseOid,
      name,
    ]);
  }

  async removeAll(databaseOid: number): Promise<void> {
    await this.server.query('DELETE FROM public.snapshots WHERE database_oid = $1', [databaseOid]);
  }

  /**
   * A reset made the database anew under another oid: its row and its snapshots' follow,
   * in one statement, before the old database goes (so a prune in between keeps them).
   */
  async moveDatabase(name: string, fromOid: number, toOid: number): Promise<void> {
    await this.server.query(
      `WITH snapshots AS (
         UPDATE public.snapshots SET database_oid = $3 WHERE database_oid = $2
       )
       UPDATE public.databases SET database_oid = $3 WHERE name = $1 AND database_oid = $2`,
      [name, fromOid, toOid],
    );
  }

  /**
   * Copies whose database is gone from the server, however it went (dropped outside the
   * daemon, say): their rows are forgotten, and their names answered to be dropped.
   */
  async orphans(): Promise<string[]> {
    const rows = await this.server.query<{ server_database: string }>(
      `DELETE FROM public.snapshots s
        WHERE NOT EXISTS (SELECT 1 FROM pg_database p WHERE p.oid = s.database_oid)
        RETURNING server_database`,
    );
    return rows.map((row) => row.server_database);
  }

  private async select(condition: string, values: unknown[]): Promise<SnapshotEntry[]> {
    const rows = await this.server.query<{
      name: string;
      server_database: string;
      created_at: Date;
      size: string;
    }>(
      `SELECT s.name, s.server_database, s.created_at, pg_database_size(p.oid)::text AS size
         FROM public.snapshots s JOIN pg_database p ON p.datname = s.server_database
        WHERE ${condition} ORDER BY s.created_at, s.name`,
      values,
    );
    return rows.map((row) => ({
      name: row.name,
      serverDatabase: row.server_database,
      createdAt: row.created_at,
      size: Number(row.size),
    }));
  }
}
