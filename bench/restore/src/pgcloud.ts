// pgcloud's two restores of a backup, each timed by its own record (completed_at -
// started_at) with its phases as database-provisioner observes them: into a new database,
// and in place, while a client's writes are tried against the live database.
import type { Client, Restore } from '@pgcloud/api-client';
import {
  createdRestore,
  deleteDatabase,
  getRestore,
  listDatabases,
  restoreBackup,
  unwrap,
} from '@pgcloud/api-client';
import type { DatabasePath, PhaseSeconds } from '@pgcloud/bench-support';
import { pollUntil, timeRestorePhases } from '@pgcloud/bench-support';
import type { Unavailable } from './write-probe.js';
import { WriteProbe } from './write-probe.js';

/** One restore: its seconds and its phases. */
export interface Timed {
  /** started_at, in ms since the epoch: its phases follow from there. */
  startedAtMs: number;
  seconds: number;
  phases: PhaseSeconds;
}

/** Runs a restore of the backup (`body` says where to) until its record is completed. */
async function restoreOnce(
  client: Client,
  path: DatabasePath,
  backupId: string,
  body: { target_database?: string },
): Promise<Restore> {
  const created = createdRestore(
    await unwrap(restoreBackup({ client, path: { ...path, backup_id: backupId }, body })),
  );
  const restore = await pollUntil(
    () => unwrap(getRestore({ client, path: { ...path, restore_id: created.restore_id } })),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restore.status === 'failed') throw new Error(`restore failed: ${restore.error ?? '?'}`);
  return restore;
}

/** Its start, and its seconds: completed_at - started_at. */
function timing(restore: Restore): { startedAtMs: number; seconds: number } {
  const startedAtMs = Date.parse(restore.started_at);
  return { startedAtMs, seconds: (Date.parse(restore.completed_at ?? '') - startedAtMs) / 1000 };
}

/**
 * A restore of the backup into a new database `name`; the database is deleted after, and
 * gone before this answers, so its removal does not weigh on the next sample.
 */
export async function timeIntoNewDatabase(
  provisioner: string,
  client: Client,
  path: DatabasePath,
  backupId: string,
  name: string,
): Promise<Timed> {
  const labels = { kind: 'backup', target: 'target_database' } as const;
  const timed = await timeRestorePhases(provisioner, labels, () =>
    restoreOnce(client, path, backupId, { target_database: name }),
  );
  const project_id = path.project_id;
  await unwrap(deleteDatabase({ client, path: { project_id, name } }));
  await pollUntil(
    () => unwrap(listDatabases({ client, path: { project_id } })),
    (list) => !list.databases.some((d) => d.name === name),
  );
  return { ...timing(timed.result), phases: timed.phases };
}

/**
 * An in-place restore of the backup, while a WriteProbe writes to the live database from
 * before the request until writes commit again after the restore has completed.
 */
export async function timeInPlace(
  provisioner: string,
  client: Client,
  path: DatabasePath,
  backupId: string,
  connection: { connectionString: string; caPem: string },
): Promise<Timed & { unavailable: Unavailable }> {
  const labels = { kind: 'backup', target: 'in_place' } as const;
  const probe = await WriteProbe.start(connection.connectionString, connection.caPem);
  let timed: { result: Restore; phases: PhaseSeconds };
  try {
    timed = await timeRestorePhases(provisioner, labels, () =>
      restoreOnce(client, path, backupId, {}),
    );
  } catch (err) {
    await probe.stop(0).catch(() => undefined);
    throw err;
  }
  const unavailable = await probe.stop();
  return { ...timing(timed.result), phases: timed.phases, unavailable };
}
