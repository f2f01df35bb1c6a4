import { DataSource } from 'typeorm';

/**
 * Runs `migrations` on `schema` of the database at `databaseUrl`, all in one transaction as
 * a service's start runs them, and closes its connection: for specs that migrate a
 * database step by step, checking what each step did to the rows before it.
 */
export async function runMigrations(
  databaseUrl: string,
  schema: string,
  migrations: (new () => unknown)[],
): Promise<void> {
  const source = new DataSource({ type: 'postgres', url: databaseUrl, schema, migrations });
  await source.initialize();
  try {
    await source.runMigrations({ transaction: 'all' });
  } finally {
    await source.destroy();
  }
}
