/** Where a restore is in its life (docs/api/restores.md#a-restore). */
export type RestoreStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';

/** A restore from a base backup, or to a point in time. */
export const RESTORE_KINDS = ['backup', 'pitr'] as const;
export type RestoreKind = (typeof RESTORE_KINDS)[number];

/** Where a restore's work is (docs/api/restores.md#a-restore), in order; a failed one keeps its own. */
export const RESTORE_PHASES = [
  'queued',
  'downloading',
  'replaying',
  'checking',
  'swapping',
  'done',
] as const;
export type RestorePhase = (typeof RESTORE_PHASES)[number];

/** A restore's numbers known so far; they only grow. */
export interface RestoreProgress {
  bytes_done: number;
  bytes_total: number;
  wal_files_done: number;
  wal_files_total: number;
  /** Null until there is an estimate. */
  eta_seconds: number | null;
}

/** A restore as the API lists and shows it (the database it ran on is the source). */
export interface Restore {
  id: string;
  kind: RestoreKind;
  backup_id?: string;
  target_time?: string;
  target_lsn?: string;
  target_restore_point?: string;
  /** Set when the restore built a new database instead of replacing the source's data. */
  target_database?: string;
  status: RestoreStatus;
  phase: RestorePhase;
  progress: RestoreProgress;
  wal_files_applied?: number;
  started_at: string;
  completed_at?: string;
  error?: string;
}

/** POST .../backups/{backup_id}/restore: what the answer shows of the new restore. */
export interface CreatedRestore {
  restore_id: string;
  status: RestoreStatus;
  started_at: string;
  target_database?: string;
}

/** Where a restore goes: in place, or into a new database of this name. */
export interface RestoreOptions {
  target_database?: string;
}

/**
 * What a restore is built from, asked afresh at every attempt from the service that owns
 * the backup: a link that downloads the base backup without credentials, and its checksum.
 */
export interface RestorePlan {
  base_backup_url: string;
  base_backup_sha256: string;
  base_backup_size_bytes: number;
  /**
   * PITR: the segments to replay, from the base backup's start, oldest first. A segment is
   * the concatenation of its links' objects, in order: one object, or the pieces it was
   * uploaded in as it grew.
   */
  wal_segments?: { name: string; urls: string[]; partial: boolean; size_bytes: number }[];
  /** PITR: replay stops after the last commit at or before it (`...ffffffZ`). */
  target_time?: string;
  /** PITR: replay stops after the record at this WAL position. */
  target_lsn?: string;
  /** PITR: replay stops at this restore point. */
  target_restore_point?: string;
}

/**
 * What a restore would do (docs/api/restores.md#plan, `?dry_run=true`): the base backup it
 * would start from, the WAL it would replay, its target, and how long this deployment's
 * restores so far suggest it would take. Nothing is created.
 */
export interface RestorePlanSummary {
  kind: RestoreKind;
  base_backup_id: string;
  base_backup_size_bytes: number;
  /** PITR: the segments from the base backup's start to the one the target lies in. */
  wal_files: number;
  wal_bytes: number;
  target_time?: string;
  target_lsn?: string;
  target_restore_point?: string;
  estimated_seconds: number;
}

/** POST ...restore?dry_run=true. */
export interface RestoreDryRun {
  plan: RestorePlanSummary;
}
