import pg from 'pg';
import { quoteIdent } from './quote.js';

const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';

/**
 * Makes sure the metadata database and a service's schema exist, so TypeORM can keep
 * its migrations table inside that schema. Safe when several services start at once.
 */
export async function ensureMetadataSchema(databaseUrl: string, schema: string): Promise<void> {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  await withClient(databaseUrl, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  }).catch(async (err: unknown) => {
    if ((err as { code?: string }).code !== '3D000') throw err; // 3D000: the database does not exist
    const maintenance = new URL(databaseUrl);
    maintenance.pathname = '/postgres';
    await withClient(maintenance.toString(), async (client) => {
      await client
        .query(`CREATE DATABASE ${quoteIdent(database)}`)
        .catch((createErr: { code?: string }) => {
          if (createErr.code !== DUPLICATE_DATABASE && createErr.code !== UNIQUE_VIOLATION)
            throw createErr;
        });
    });
    await ensureMetadataSchema(databaseUrl, schema);
  });
}

async function withClient(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/** True when a driver error is PostgreSQL's unique violation (a duplicate key). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e.code === UNIQUE_VIOLATION || e.driverError?.code === UNIQUE_VIOLATION;
}
