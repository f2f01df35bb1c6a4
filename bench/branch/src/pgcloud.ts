import { performance } from 'node:perf_hooks';
import type { Client } from '@pgcloud/api-client';
import {
  createBackup,
  createDatabase,
  deleteDatabase,
  getBackup,
  getDatabase,
  restoreBackup,
  unwrap,
} from '@pgcloud/api-client';
import type { DatabasePath } from '@pgcloud/bench-support';
import { pollUntil } from '@pgcloud/bench-support';

/** Polls the new database until it runs; throws when it failed. */
async function untilRunning(client: Client, path: DatabasePath): Promise<void> {
  const database = await pollUntil(
    () => unwrap(getDatabase({ client, path })),
    (d) => d.status === 'running' || d.status === 'failed',
  );
  if (database.status === 'failed')
    throw new Error(`${path.name} failed: ${database.error ?? '?'}`);
}

/** Milliseconds from POST .../databases {from} (no target) to the branch reading running. */
export async function timeBranch(client: Client, source: DatabasePath, name: string) {
  const path = { project_id: source.project_id, name };
  const started = performance.now();
  await unwrap(
    createDatabase({
      client,
      path: { project_id: source.project_id },
      body: { name, from: { database: source.name } },
    }),
  );
  await untilRunning(client, path);
  const took = performance.now() - started;
  await unwrap(deleteDatabase({ client, path }));
  return took;
}

/**
 * Milliseconds of today's other way to a copy: a backup (POST .../backups until it is
 * completed), then its restore into a new database until that reads running.
 */
export async function timeBackupRestore(client: Client, source: DatabasePath, name: string) {
  const started = performance.now();
  const created = await unwrap(createBackup({ client, path: source }));
  const backup = await pollUntil(
    () => unwrap(getBackup({ client, path: { ...source, backup_id: created.id } })),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status === 'failed') throw new Error(`the backup failed: ${backup.error ?? '?'}`);
  await unwrap(
    restoreBackup({
      client,
      path: { ...source, backup_id: backup.id },
      body: { target_database: name },
    }),
  );
  const path = { project_id: source.project_id, name };
  await untilRunning(client, path);
  const took = performance.now() - started;
  await unwrap(deleteDatabase({ client, path }));
  return took;
}
