import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { idSchema } from '../ids.js';

/** Where a restore is in its life (docs/api/restores.md#a-restore). */
export const RESTORE_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type RestoreStatus = (typeof RESTORE_STATUSES)[number];

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

/** A restore's numbers known so far; none of them goes back. */
export class RestoreProgress {
  @ApiProperty({
    type: 'integer',
    example: 1048576,
    description: "The base backup's bytes downloaded.",
  })
  bytes_done: number;

  @ApiProperty({
    type: 'integer',
    example: 4194304,
    description: "The base backup's size; 0 until the restore is planned.",
  })
  bytes_total: number;

  @ApiProperty({ type: 'integer', example: 0, description: 'WAL segments through replay.' })
  wal_files_done: number;

  @ApiProperty({
    type: 'integer',
    example: 12,
    description: 'WAL segments to replay (PITR restores; 0 for backup restores).',
  })
  wal_files_total: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description: 'Seconds left, estimated; null until there is an estimate.',
  })
  eta_seconds: number | null;
}

/**
 * A restore of a database, from a backup or to a point in time, as the API lists and shows
 * it (the database it ran on is the source).
 */
export class Restore {
  @ApiProperty(idSchema('rstr'))
  id: string;

  @ApiProperty({ enum: RESTORE_KINDS })
  kind: RestoreKind;

  @ApiPropertyOptional({ example: 'bkp_k3v9x0q2m8t4b7w1c5zd', description: 'Backup restores.' })
  backup_id?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'PITR restores to a time.' })
  target_time?: string;

  @ApiPropertyOptional({ example: '0/3000148', description: 'PITR restores to a WAL position.' })
  target_lsn?: string;

  @ApiPropertyOptional({
    example: 'before-migration',
    description: 'PITR restores to a restore point.',
  })
  target_restore_point?: string;

  @ApiPropertyOptional({
    example: 'orders-restored',
    description: 'The new database it restored into, when not in place.',
  })
  target_database?: string;

  @ApiProperty({ enum: RESTORE_STATUSES })
  status: RestoreStatus;

  @ApiProperty({
    enum: RESTORE_PHASES,
    example: 'downloading',
    description: 'Where its work is, in this order; a failed restore keeps the phase it failed in.',
  })
  phase: RestorePhase;

  @ApiProperty({ type: RestoreProgress })
  progress: RestoreProgress;

  @ApiPropertyOptional({ description: 'PITR restores: WAL segments replayed.' })
  wal_files_applied?: number;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Completed restores.' })
  completed_at?: string;

  @ApiPropertyOptional({ description: 'Why it failed, when it did.' })
  error?: string;
}

/** GET .../restores. */
export class RestoreList {
  @ApiProperty({ type: [Restore], description: 'Newest first.' })
  restores: Restore[];
}

/** POST .../backups/{backup_id}/restore: what the answer shows of the new restore. */
export class CreatedRestore {
  @ApiProperty(idSchema('rstr'))
  restore_id: string;

  @ApiProperty({ enum: RESTORE_STATUSES, example: 'pending' })
  status: RestoreStatus;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiPropertyOptional({ example: 'orders-restored' })
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
  /** The backup replay starts from. */
  base_backup_id: string;
  base_backup_url: string;
  base_backup_sha256: string;
  base_backup_size_bytes: number;
  /**
   * PITR: the segments to replay, from the base backup's start, oldest first. A segment is
   * the concatenation of its links' objects, in order: one object, or the pieces it was
   * uploaded in as it grew.
   */
  wal_segments?: {
    name: string;
    urls: string[];
    partial: boolean;
    size_bytes: number;
    /** Per link, the ETag the object store answered when the archive stored it, if known. */
    etags?: (string | null)[];
    /** A completed segment stored compressed (one link): its object is zstd. */
    compression?: 'zstd';
  }[];
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
export class RestorePlanSummary {
  @ApiProperty({ enum: RESTORE_KINDS })
  kind: RestoreKind;

  @ApiProperty({ example: 'bkp_k3v9x0q2m8t4b7w1c5zd', description: 'The backup it starts from.' })
  base_backup_id: string;

  @ApiProperty({ type: 'integer', example: 278921216 })
  base_backup_size_bytes: number;

  @ApiProperty({
    type: 'integer',
    example: 12,
    description:
      'WAL segments from the base backup to the target (a time target: to the end of the archive, as replay alone finds where a time stops); 0 for a backup.',
  })
  wal_files: number;

  @ApiProperty({ type: 'integer', example: 201326592, description: 'Their bytes.' })
  wal_bytes: number;

  @ApiPropertyOptional({ format: 'date-time' })
  target_time?: string;

  @ApiPropertyOptional({ example: '0/3000148' })
  target_lsn?: string;

  @ApiPropertyOptional({ example: 'before-migration' })
  target_restore_point?: string;

  @ApiProperty({
    type: 'integer',
    example: 42,
    description: "At the download and replay rates of this deployment's recent restores.",
  })
  estimated_seconds: number;
}

/** POST ...restore?dry_run=true. */
export class RestoreDryRun {
  @ApiProperty({ type: RestorePlanSummary })
  plan: RestorePlanSummary;
}
