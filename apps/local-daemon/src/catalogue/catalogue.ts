import type { OnModuleInit } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { quoteIdent } from '@pgcloud/postgres';
import { ManagedServer } from '../server/managed-server.js';

/** A database as the server knows it: its name and its oid, which a new one never shares. */
export interface DatabaseIdentity {
  name: string;
  oid: number;
}

/** What the catalogue keeps of a database. */
export interface CatalogueEntry {
  /** When the daemon created it, or first saw it. */
  createdAt: Date;
  /** When the daemon drops it; null when never. */
  expiresAt: Date | null;
  /** Dropped when the daemon stops. */
  temporary: boolean;
}

const DUPLICATE_DATABASE = '42P04';

/**
 * The daemon's small catalogue, in a database of its own on the managed server: when
 * each database was created, or first seen, and how long it lives. A row stands for one
 * database oid, so a database dropped and made again under the same name outside the
 * daemon counts as new, and keeps no expiry of the old one.
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
    await this.server.query(
      `ALTER TABLE public.databases
         ADD COLUMN IF NOT EXISTS expires_at timestamptz,
         ADD COLUMN IF NOT EXISTS temporary boolean NOT NULL DEFAULT false`,
    );
    // Snapshots (catalogue/snapshot-catalogue.ts): a copy on the server per row.
    await this.server.query(
      `CREATE TABLE IF NOT EXISTS public.snapshots (
         database_oid oid NOT NULL,
         name text NOT NULL,
         server_database text NOT NULL UNIQUE,
         created_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (database_oid, name)
       )`,
    );
  }

  /**
   * What the catalogue keeps of each database: a database it does not know yet, or knows
   * under another oid, is recorded as created now, to live for ever.
   */
  async entries(databases: readonly DatabaseIdentity[]): Promise<Map<string, CatalogueEntry>> {
    const names = databases.map((database) => database.name);
    await this.server.query(
      `INSERT INTO public.databases AS databases (name, database_oid)
       SELECT * FROM unnest($1::text[], $2::oid[])
       ON CONFLICT (name) DO UPDATE
         SET database_oid = EXCLUDED.database_oid, created_at = now(),
             expires_at = NULL, temporary = false
         WHERE databases.database_oid <> EXCLUDED.database_oid`,
      [names, databases.map((database) => database.oid)],
    );
    const rows = await this.server.query<{
      name: string;
      created_at: Date;
      expires_at: Date | null;
      temporary: boolean;
    }>(
      `SELECT name, created_at, expires_at, temporary FROM public.databases
        WHERE name = ANY($1::text[])`,
      [names],
    );
    return new Map(
      rows.map((row) => [
        row.name,
        { createdAt: row.created_at, expiresAt: row.expires_at, temporary: row.temporary },
      ]),
    );
  }

  /** Records how long a database the catalogue knows lives (see entries). */
  async setLifetime(
    name: string,
    lifetime: { expiresAt: Date | null; temporary?: boolean },
  ): Promise<void> {
    await this.server.query(
      `UPDATE public.databases SET expires_at = $2, temporary = coalesce($3, temporary)
        WHERE name = $1`,
      [name, lifetime.expiresAt, lifetime.temporary ?? null],
    );
  }

  /**
   * The databases whose expiry is at or before `now`. Only the very database a row
   * stands for (its oid): one made again under its name outside the daemon is not it.
   */
  async expired(now: Date): Promise<string[]> {
    return this.names('d.expires_at <= $1', [now]);
  }

  /** The databases made temporary (the very ones, as for expired). */
  async temporaries(): Promise<string[]> {
    return this.names('d.temporary', []);
  }

  private async names(condition: string, values: unknown[]): Promise<string[]> {
    const rows = await this.server.query<{ name: string }>(
      `SELECT d.name FROM public.databases d
         JOIN pg_database p ON p.oid = d.database_oid AND p.datname = d.name
        WHERE ${condition} ORDER BY d.name`,
      values,
    );
    return rows.map((row) => row.name);
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
