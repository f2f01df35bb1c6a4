import type { OnModuleInit } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { quoteIdent } from '@pgcloud/postgres';
import { ManagedServer } from '../server/managed-server.js';

/** A database as the server knows it: its name and its oid, which a new one never shares. */
export interface DatabaseIdentity {
  name: string;
  oid: number;
}

const DUPLICATE_DATABASE = '42P04';

/**
 * The daemon's small catalogue, in a database of its own on the managed server: when
 * each database was created, or first seen. A row stands for one database oid, so a
 * database dropped and made again under the same name outside the daemon counts as new.
 */
@Injectable()
export class Catalogue implements OnModuleInit {
  constructor(private readonly server: ManagedServer) {}

  /** Makes the catalogue database and its table when missing. */
  async onModuleInit(): Promise<void> {
    const name = this.server.catalogueDatabase;
    await this.server.withSession(this.server.maintenanceDatabase, async (client) => {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount !== 0) return;
      // template0: nobody's session on template1 can make this fail.
      await client
        .query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE template0`)
        .catch((err: { code?: string }) => {
          if (err.code !== DUPLICATE_DATABASE) throw err;
        });
      await client.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${quoteIdent(name)} FROM PUBLIC`);
    });
    await this.server.query(
      `CREATE TABLE IF NOT EXISTS public.databases (
         name text PRIMARY KEY,
         database_oid oid NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
  }

  /**
   * When each database was created or first seen: a database the catalogue does not
   * know yet, or knows under another oid, is recorded as of now.
   */
  async createdAt(databases: readonly DatabaseIdentity[]): Promise<Map<string, Date>> {
    const names = databases.map((database) => database.name);
    await this.server.query(
      `INSERT INTO public.databases AS databases (name, database_oid)
       SELECT * FROM unnest($1::text[], $2::oid[])
       ON CONFLICT (name) DO UPDATE
         SET database_oid = EXCLUDED.database_oid, created_at = now()
         WHERE databases.database_oid <> EXCLUDED.database_oid`,
      [names, databases.map((database) => database.oid)],
    );
    const rows = await this.server.query<{ name: string; created_at: Date }>(
      'SELECT name, created_at FROM public.databases WHERE name = ANY($1::text[])',
      [names],
    );
    return new Map(rows.map((row) => [row.name, row.created_at]));
  }

  /**
   * Forgets databases that are gone from the server, whoever dropped them. pg_database
   * is read at the moment of the DELETE, so a database created meanwhile is kept.
   */
  async prune(): Promise<void> {
    await this.server.query(
      'DELETE FROM public.databases d WHERE NOT EXISTS (SELECT 1 FROM pg_database p WHERE p.oid = d.database_oid)',
    );
  }

  /** Forgets a dropped database. */
  async forget(name: string): Promise<void> {
    await this.server.query('DELETE FROM public.databases WHERE name = $1', [name]);
  }
}
