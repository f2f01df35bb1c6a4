/** Where a backup is in its life (docs/api/backups.md). */
export const BACKUP_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export type BackupStatus = (typeof BACKUP_STATUSES)[number];

/** `manual` (asked for) or `automated` (the daily schedule, and PITR's base backups). */
export type BackupType = 'manual' | 'automated';

/** A backup as the API shows it. */
export interface Backup {
  id: string;
  database_id: string;
  type: BackupType;
  status: BackupStatus;
  /** 0 until completed. */
  size_bytes: number;
  created_at: string;
  /** When the base backup began streaming (running and after). */
  started_at?: string;
  completed_at?: string;
  /** Automated backups only. */
  expires_at?: string;
  /** Hex SHA-256 of the object's bytes, once completed. */
  checksum_sha256?: string;
  /** WAL position where the backup starts and ends, once completed (PostgreSQL's `0/2000028`). */
  start_lsn?: string;
  end_lsn?: string;
  /** A short reason, when failed. */
  error?: string;
}

/** POST .../backups: what the interface shows of the new backup. */
export interface CreatedBackup {
  id: string;
  type: BackupType;
  status: BackupStatus;
  created_at: string;
}

/** GET .../backups/{backup_id}/download. */
export interface DownloadLink {
  download_url: string;
  expires_at: string;
}

/** A backup as pitr-worker sees it: where its WAL begins and ends, and on which timeline. */
export interface ArchiveBackup {
  id: string;
  status: BackupStatus;
  start_lsn: string | null;
  end_lsn: string | null;
  timeline: number | null;
  created_at: string;
  completed_at: string | null;
  /** Of the archive object; 0 until completed. */
  size_bytes: number;
}
