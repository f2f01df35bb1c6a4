import type pg from 'pg';

/**
 * Writes a named restore point into the server's WAL (docs/api/pitr.md#restore-points) and
 * answers its position as PostgreSQL prints it (the end of the record). A server in
 * recovery refuses.
 */
export async function createRestorePoint(client: pg.ClientBase, name: string): Promise<string> {
  const { rows } = await client.query<{ lsn: string }>(
    'SELECT pg_create_restore_point($1)::text AS lsn',
    [name],
  );
  const lsn = rows[0]?.lsn;
  if (!lsn) throw new Error('pg_create_restore_point answered no position');
  return lsn;
}
