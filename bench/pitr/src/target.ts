// At each size, the moment all three restores go to: WAL written after the size's backups,
// the target just past its last commit, a marker committed after the target, and both
// archives (pgcloud's and pgBackRest's) holding the marker, so every replay stops on it.
import { performance } from 'node:perf_hooks';
import type { RestorePlanSummary } from '@pgcloud/api-client';
import type { HttpsS3Database } from '@pgcloud/bench-support';
import { archivedThrough, switchWal } from '@pgcloud/bench-support';
import { planOf, windowPast } from './pgcloud.js';
import type { Written } from './wal-writes.js';
import { commitMarker, connect, writeWal } from './wal-writes.js';

// Archiving a few gigabytes of WAL into the local S3 can trail the writes by minutes.
const ARCHIVE_TIMEOUT_MS = 15 * 60_000;

/** The target of one size, and what leads to it. */
export interface Target {
  written: Written;
  /** The recovery window's `to` once past the writes: after the last row, before the marker. */
  time: string;
  /** pgcloud's plan to restore to it (dry run): its base backup, the WAL after it. */
  plan: RestorePlanSummary;
  /** Seconds from the marker's segment switch until both archives held it. */
  archivedSeconds: number;
}

/**
 * Writes `walBytes` of WAL, picks the target, commits the marker and ends its segment, waits
 * for both archives, and checks that pgcloud's plan starts from `backupId`, the backup just
 * taken: all three restores replay about the same WAL from a base of the same size.
 */
export async function prepareTarget(
  db: HttpsS3Database,
  caPem: string,
  walBytes: number,
  backupId: string,
): Promise<Target> {
  const { client, path, connection } = db.bulk;
  const session = await connect(connection.connection_string, caPem);
  try {
    const written = await writeWal(session, walBytes);
    const time = (await windowPast(client, path, written.endedAt)).to;
    const marker = await commitMarker(session);
    const walFile = await switchWal(db.server.address);
    const switched = performance.now();
    await Promise.all([
      windowPast(client, path, marker),
      archivedThrough(db.server.address, walFile, ARCHIVE_TIMEOUT_MS),
    ]);
    const archivedSeconds = (performance.now() - switched) / 1000;
    const plan = await planOf(client, path, time);
    if (plan.base_backup_id !== backupId)
      throw new Error(
        `pgcloud's plan starts from backup ${plan.base_backup_id}, not ${backupId}, the one just taken`,
      );
    return { written, time, plan, archivedSeconds };
  } finally {
    await session.end();
  }
}
