import { Injectable } from '@nestjs/common';
import type { LocalExtension, LocalSchema } from '@pgcloud/contracts';
import type pg from 'pg';
import { ManagedServer } from '../server/managed-server.js';

/** What a database holds: its size and its tables, as the daemon's list shows them. */
export interface DatabaseContents {
  tables: number;
  views: number;
  functions: number;
  indexes: number;
  schemas: LocalSchema[];
  extensions: LocalExtension[];
}

// The schemas that count: all but PostgreSQL's own (pg_catalog, information_schema,
// pg_toast) and the temporary ones of sessions (pg_temp_N, pg_toast_temp_N).
const COUNTED_SCHEMAS = `
  SELECT oid, nspname FROM pg_namespace
  WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    AND nspname !~ '^pg_(toast_)?temp_'`;

// Ordinary tables (partitions among them) and partitioned tables.
const TABLE_KINDS = `('r', 'p')`;

const SCHEMAS_SQL = `
  WITH schemas AS (${COUNTED_SCHEMAS})
  SELECT s.nspname AS name,
         count(c.oid) FILTER (WHERE c.relkind IN ${TABLE_KINDS})::int AS "tableCount"
  FROM schemas s LEFT JOIN pg_class c ON c.relnamespace = s.oid
  GROUP BY s.nspname
  ORDER BY s.nspname`;

// Functions and procedures (not aggregates or window functions, which pg_proc tells
// apart by prokind) that no extension owns (pg_depend deptype 'e'); indexes, the
// primary keys' among them, on the tables counted above, and on nothing else.
const COUNTS_SQL = `
  WITH schemas AS (${COUNTED_SCHEMAS})
  SELECT
    (SELECT count(*) FROM pg_class c
      WHERE c.relnamespace IN (SELECT oid FROM schemas) AND c.relkind IN ${TABLE_KINDS})::int AS tables,
    (SELECT count(*) FROM pg_class c
      WHERE c.relnamespace IN (SELECT oid FROM schemas) AND c.relkind IN ('v', 'm'))::int AS views,
    (SELECT count(*) FROM pg_proc p
      WHERE p.pronamespace IN (SELECT oid FROM schemas) AND p.prokind IN ('f', 'p')
        AND NOT EXISTS (
          SELECT 1 FROM pg_depend d
          WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))::int AS functions,
    (SELECT count(*) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
      WHERE t.relnamespace IN (SELECT oid FROM schemas) AND t.relkind IN ${TABLE_KINDS})::int AS indexes`;

const EXTENSIONS_SQL = `
  SELECT extname AS name, extversion AS version FROM pg_extension ORDER BY extname`;

const TABLE_COUNT_SQL = `
  WITH schemas AS (${COUNTED_SCHEMAS})
  SELECT count(*)::int AS tables FROM pg_class c
  WHERE c.relnamespace IN (SELECT oid FROM schemas) AND c.relkind IN ${TABLE_KINDS}`;

type Counts = Pick<DatabaseContents, 'tables' | 'views' | 'functions' | 'indexes'>;

/** Reads a database's catalogs in a short session of its own. */
@Injectable()
export class DatabaseInspector {
  constructor(private readonly server: ManagedServer) {}

  /** Tables, views, functions, indexes, schemas and extensions of `database`. */
  contents(database: string): Promise<DatabaseContents> {
    return this.server.withSession(database, async (client) => {
      const counts = await one<Counts>(client, COUNTS_SQL);
      const schemas = (await client.query<LocalSchema>(SCHEMAS_SQL)).rows;
      const extensions = (await client.query<LocalExtension>(EXTENSIONS_SQL)).rows;
      return { ...counts, schemas, extensions };
    });
  }

  /** The list's tableCount: the detail record's `tables`, by the same rule. */
  tableCount(database: string): Promise<number> {
    return this.server.withSession(
      database,
      async (client) => (await one<{ tables: number }>(client, TABLE_COUNT_SQL)).tables,
    );
  }
}

async function one<T extends pg.QueryResultRow>(client: pg.Client, text: string): Promise<T> {
  const row = (await client.query<T>(text)).rows[0];
  if (row === undefined) throw new Error('the catalog query answered no row');
  return row;
}
