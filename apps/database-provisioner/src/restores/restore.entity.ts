import type { RestoreKind, RestorePhase, RestoreStatus } from '@pgcloud/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** bigint columns arrive as strings (they may pass 2^53); sizes never do. */
const bigintAsNumber = {
  to: (value: number) => value,
  from: (value: string | null) => (value === null ? 0 : Number(value)),
};

/** A restore of a database (its source): in place, or into a new database of the project. */
@Entity({ schema: 'provisioner', name: 'restores' })
export class RestoreEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'database_id', type: 'text' })
  databaseId: string;

  /** The new database a `target_database` restore builds; null for an in-place restore. */
  @Column({ name: 'target_database_id', type: 'text', nullable: true })
  targetDatabaseId: string | null;

  @Column({ name: 'target_database', type: 'text', nullable: true })
  targetDatabase: string | null;

  @Column({ type: 'text' })
  kind: RestoreKind;

  @Column({ name: 'backup_id', type: 'text', nullable: true })
  backupId: string | null;

  /** PITR: the target, to the microsecond, as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  @Column({ name: 'target_time', type: 'text', nullable: true })
  targetTime: string | null;

  /** PITR: or the WAL position it stops after, as `X/XXXXXXXX`. */
  @Column({ name: 'target_lsn', type: 'text', nullable: true })
  targetLsn: string | null;

  /** PITR: or the restore point it stops at. */
  @Column({ name: 'target_restore_point', type: 'text', nullable: true })
  targetRestorePoint: string | null;

  @Column({ type: 'text' })
  status: RestoreStatus;

  /** Where its work is; a failed restore keeps the phase it failed in. */
  @Column({ type: 'text', default: 'queued' })
  phase: RestorePhase;

  /** The base backup's bytes downloaded so far, of `bytesTotal` (0 until planned). */
  @Column({ name: 'bytes_done', type: 'bigint', default: 0, transformer: bigintAsNumber })
  bytesDone: number;

  @Column({ name: 'bytes_total', type: 'bigint', default: 0, transformer: bigintAsNumber })
  bytesTotal: number;

  /** WAL segments through replay, of `walFilesTotal` (the plan's; 0 for a backup restore). */
  @Column({ name: 'wal_files_done', type: 'integer', default: 0 })
  walFilesDone: number;

  @Column({ name: 'wal_files_total', type: 'integer', default: 0 })
  walFilesTotal: number;

  @Column({ name: 'eta_seconds', type: 'integer', nullable: true })
  etaSeconds: number | null;

  @Column({ name: 'wal_files_applied', type: 'integer', nullable: true })
  walFilesApplied: number | null;

  /** Seconds the build took to download (and lay out) the base backup and the WAL. */
  @Column({ name: 'download_seconds', type: 'double precision', nullable: true })
  downloadSeconds: number | null;

  /** Seconds recovery took, to the target and promotion. */
  @Column({ name: 'replay_seconds', type: 'double precision', nullable: true })
  replaySeconds: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** When a cancel was asked; the job stops at its next look (before it swaps). */
  @Column({ name: 'cancel_requested_at', type: 'timestamptz', nullable: true })
  cancelRequestedAt: Date | null;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}
