import type { ArchiveBackup, Backup } from '@pgcloud/contracts';
import type { BackupEntity } from './backup.entity.js';

/** Where a database's base backups live: ids only, so a new database of the same name never mixes. */
export function baseBackupPrefix(projectId: string, databaseId: string): string {
  return `projects/${projectId}/databases/${databaseId}/base/`;
}

/** The object key of one base backup (docs/api/backups.md). */
export function baseBackupKey(projectId: string, databaseId: string, backupId: string): string {
  return `${baseBackupPrefix(projectId, databaseId)}${backupId}.tar.zst`;
}

/** The file name a download is saved under (docs/api/backups.md). */
export function downloadFileName(databaseName: string, backupId: string): string {
  return `${databaseName}-${backupId}.tar.zst`;
}

/** A backup as the API shows it: fields that do not apply are left out. */
export function toBackup(record: BackupEntity): Backup {
  const backup: Backup = {
    id: record.id,
    database_id: record.databaseId,
    type: record.type,
    status: record.status,
    size_bytes: record.status === 'completed' ? record.sizeBytes : 0,
    created_at: record.createdAt.toISOString(),
  };
  if (record.startedAt) backup.started_at = record.startedAt.toISOString();
  if (record.expiresAt) backup.expires_at = record.expiresAt.toISOString();
  if (record.status === 'completed') {
    if (record.completedAt) backup.completed_at = record.completedAt.toISOString();
    if (record.checksumSha256) backup.checksum_sha256 = record.checksumSha256;
    if (record.startLsn) backup.start_lsn = record.startLsn;
    if (record.endLsn) backup.end_lsn = record.endLsn;
  }
  if (record.status === 'failed' && record.error) backup.error = record.error;
  return backup;
}

/** A backup as pitr-worker builds its window on it: any status, null where absent. */
export function toArchiveBackup(record: BackupEntity): ArchiveBackup {
  return {
    id: record.id,
    status: record.status,
    start_lsn: record.startLsn,
    end_lsn: record.endLsn,
    timeline: record.timeline,
    created_at: record.createdAt.toISOString(),
    completed_at: record.completedAt?.toISOString() ?? null,
    size_bytes: record.sizeBytes,
  };
}
