/** WAL receiver states (docs/api/pitr.md#the-archive-and-the-receiver). */
export type WalReceiverState = 'starting' | 'running' | 'stopped' | 'error';

/** A time range every second of which a PITR restore can reach. */
export interface RecoveryWindowRange {
  from: string;
  to: string;
}

/** GET .../pitr/config. Never enabled: everything but `enabled` is null. */
export interface PitrConfig {
  enabled: boolean;
  base_backup_id: string | null;
  retention_days: number | null;
  /** Null until the first base backup has completed and the archive covers its end. */
  recovery_window: RecoveryWindowRange | null;
}

/** POST .../pitr/enable. */
export interface EnabledPitr {
  enabled: true;
  base_backup_id: string;
  wal_receiver_status: WalReceiverState;
}

/** POST .../pitr/disable. */
export interface DisabledPitr {
  enabled: false;
  wal_receiver_status: 'stopped';
}

/** One completed WAL segment in the archive. */
export interface WalArchiveEntry {
  filename: string;
  size_bytes: number;
  archived_at: string;
}

/** GET .../pitr/wal: one page of the archive; the totals count every completed segment. */
export interface WalArchivePage {
  archives: WalArchiveEntry[];
  total_count: number;
  total_size_bytes: number;
  next_cursor: string | null;
}

/**
 * GET .../pitr/recovery-window. `to`: every transaction committed at or before it is in
 * the archive; `from`: the end of the oldest retained base backup of the current archive.
 * All null while the first base backup is still being taken.
 */
export interface RecoveryWindow {
  from: string | null;
  to: string | null;
  base_backup_time: string | null;
  latest_wal_time: string | null;
}

/** GET .../pitr/receiver-status. */
export interface WalReceiverStatus {
  status: WalReceiverState;
  started_at: string;
  /** The newest archived segment; `.partial` when it is still being written. */
  last_wal_file: string | null;
  bytes_received: number;
  errors: number;
  /** now - recovery window `to`, rounded down. */
  lag_seconds: number;
}

/** pitr.backups-in-use: database id -> ISO time; backups completed since then stay. */
export interface BackupsInUse {
  keep_from: Record<string, string>;
}

/** A named WAL position of the current archive (POST .../pitr/restore-points). */
export interface RestorePoint {
  name: string;
  lsn: string;
  created_at: string;
}

/** GET .../pitr/restore-points: the current archive's, oldest first. */
export interface RestorePointList {
  restore_points: RestorePoint[];
}

/** POST .../pitr/restore: the new restore and its target, exactly one of the three. */
export interface CreatedPitrRestore {
  restore_id: string;
  /** The target as a timestamp (for `latest`, the moment the request was accepted). */
  target_time?: string;
  target_lsn?: string;
  target_restore_point?: string;
  status: string;
  started_at: string;
  target_database?: string;
}
