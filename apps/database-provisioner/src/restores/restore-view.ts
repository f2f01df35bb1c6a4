import type { Restore } from '@pgcloud/contracts';
import type { RestoreEntity } from './restore.entity.js';

/** A restore as the API shows it: fields that do not apply are left out. */
export function toRestore(record: RestoreEntity): Restore {
  const restore: Restore = {
    id: record.id,
    kind: record.kind,
    status: record.status,
    started_at: record.startedAt.toISOString(),
    phase: record.phase,
    progress: {
      bytes_done: record.bytesDone,
      bytes_total: record.bytesTotal,
      wal_files_done: record.walFilesDone,
      wal_files_total: record.walFilesTotal,
      eta_seconds: record.etaSeconds,
    },
  };
  if (record.backupId) restore.backup_id = record.backupId;
  if (record.targetTime) restore.target_time = record.targetTime;
  if (record.targetLsn) restore.target_lsn = record.targetLsn;
  if (record.targetRestorePoint) restore.target_restore_point = record.targetRestorePoint;
  if (record.targetDatabase) restore.target_database = record.targetDatabase;
  if (record.walFilesApplied !== null) restore.wal_files_applied = record.walFilesApplied;
  if (record.status === 'completed' && record.completedAt)
    restore.completed_at = record.completedAt.toISOString();
  if (record.status === 'failed' && record.error) restore.error = record.error;
  return restore;
}
