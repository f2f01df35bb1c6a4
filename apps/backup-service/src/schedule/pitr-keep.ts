import type { BackupStatus } from '@pgcloud/contracts';
import { microsOf, parseTargetTime } from '@pgcloud/contracts';

/** What the sweep knows of an expired backup. */
export interface ExpiredBackup {
  id: string;
  databaseId: string;
  status: BackupStatus;
  createdAt: Date;
  completedAt: Date | null;
}

/**
 * Whether PITR still needs an expired backup (docs/api/backups.md). `keepFrom` is
 * pitr-worker's answer: per database, the time from which its window needs backups. One
 * completed at or after it stays, and so does one not completed but created at or after
 * it. A time that cannot be read keeps every backup of its database: one wrongly kept is
 * swept on a later round, one wrongly deleted is lost.
 */
export function neededByPitr(backup: ExpiredBackup, keepFrom: Record<string, string>): boolean {
  if (!Object.hasOwn(keepFrom, backup.databaseId)) return false;
  const from = parseTargetTime(String(keepFrom[backup.databaseId]));
  if (!from) return true;
  const at = backup.status === 'completed' ? backup.completedAt : backup.createdAt;
  return at === null || microsOf(at) >= from.micros;
}
