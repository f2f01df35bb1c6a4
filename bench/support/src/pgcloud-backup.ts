// A manual backup of the bench's database through pgcloud's API, waited for to its end.
import type { Client } from '@pgcloud/api-client';
import { createBackup, getBackup, unwrap } from '@pgcloud/api-client';
import type { DatabasePath } from './bench-database.js';
import { pollUntil } from './bench-database.js';

/** A completed backup of the database: its id, size and the WAL position it starts at. */
export async function takeBackup(
  client: Client,
  path: DatabasePath,
): Promise<{ id: string; sizeBytes: number; startLsn: string | null }> {
  const created = await unwrap(createBackup({ client, path }));
  const backup = await pollUntil(
    () => unwrap(getBackup({ client, path: { ...path, backup_id: created.id } })),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status !== 'completed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  return { id: backup.id, sizeBytes: backup.size_bytes, startLsn: backup.start_lsn ?? null };
}
