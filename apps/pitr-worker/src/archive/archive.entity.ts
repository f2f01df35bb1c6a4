import type { ArchiveState, WalReceiverState } from '@pgcloud/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** bigint columns that hold WAL positions: BigInt in code, exact at any size. */
export const lsnColumn = {
  to: (value: bigint | null | undefined) => (value == null ? value : value.toString()),
  from: (value: string | null) => (value === null ? null : BigInt(value)),
};

/** bigint columns of byte counts, which stay far below 2^53. */
export const bytesColumn = {
  to: (value: number) => value,
  from: (value: string | null) => (value === null ? 0 : Number(value)),
};

/** A nullable bigint column of bytes, as a number or null. */
export const nullableBytesColumn = {
  to: (value: number | null) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/**
 * PITR of one database: its settings, its archive (timeline and start position) and the
 * WAL receiver that fills it, which one pitr-worker replica runs under a lease.
 */
@Entity({ schema: 'pitr', name: 'archives' })
export class ArchiveEntity {
  @PrimaryColumn({ name: 'database_id', type: 'text' })
  databaseId: string;

  @Column({ name: 'project_id', type: 'text' })
  projectId: string;

  @Column({ name: 'owner_id', type: 'text' })
  ownerId: string;

  @Column({ name: 'database_name', type: 'text' })
  databaseName: string;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ name: 'retention_days', type: 'integer' })
  retentionDays: number;

  /** The base backup enabling took. */
  @Column({ name: 'base_backup_id', type: 'text', nullable: true })
  baseBackupId: string | null;

  /** Timeline and first WAL position of the archive; null until its slot is made. */
  @Column({ type: 'integer', nullable: true })
  timeline: number | null;

  @Column({ name: 'start_lsn', type: 'bigint', nullable: true, transformer: lsnColumn })
  startLsn: bigint | null;

  /** Disabled, but the replication slot could not be dropped yet: the sweep tries again. */
  @Column({ name: 'slot_to_drop', type: 'boolean' })
  slotToDrop: boolean;

  /** An in-place restore of the database runs: the receiver is stopped until it ends. */
  @Column({ name: 'paused_for_restore', type: 'boolean' })
  pausedForRestore: boolean;

  @Column({ name: 'paused_at', type: 'timestamptz', nullable: true })
  pausedAt: Date | null;

  /** Backups completed since then are still needed by the window (backup-service asks). */
  @Column({ name: 'keep_from', type: 'timestamptz', nullable: true })
  keepFrom: Date | null;

  /**
   * A restore accepted for a target keeps the base backup it replays from (completed at
   * hold_from) and the WAL after it, until hold_until, however the window slides meanwhile.
   */
  @Column({ name: 'hold_from', type: 'timestamptz', nullable: true })
  holdFrom: Date | null;

  @Column({ name: 'hold_until', type: 'timestamptz', nullable: true })
  holdUntil: Date | null;

  @Column({ name: 'enabled_at', type: 'timestamptz' })
  enabledAt: Date;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt: Date | null;

  @Column({ name: 'receiver_status', type: 'text' })
  receiverStatus: WalReceiverState;

  @Column({ name: 'receiver_started_at', type: 'timestamptz' })
  receiverStartedAt: Date;

  @Column({ name: 'receiver_errors', type: 'integer' })
  receiverErrors: number;

  /** Bumped by restart-receiver: the replica running it starts a new one. */
  @Column({ name: 'receiver_generation', type: 'integer' })
  receiverGeneration: number;

  @Column({ name: 'bytes_received', type: 'bigint', transformer: bytesColumn })
  bytesReceived: number;

  /** Everything before this WAL position is in S3 (the pieces of the segment being written too). */
  @Column({ name: 'archived_lsn', type: 'bigint', nullable: true, transformer: lsnColumn })
  archivedLsn: bigint | null;

  @Column({ name: 'last_wal_file', type: 'text', nullable: true })
  lastWalFile: string | null;

  /** Every transaction committed at or before this time is in S3. */
  @Column({ name: 'window_to', type: 'timestamptz', nullable: true })
  windowTo: Date | null;

  /** When the newest WAL data reached S3. */
  @Column({ name: 'latest_wal_time', type: 'timestamptz', nullable: true })
  latestWalTime: Date | null;

  /** What the last check of the archive in the object store found (archive-checks.ts). */
  @Column({ name: 'archive_state', type: 'text', nullable: true })
  archiveState: ArchiveState | null;

  @Column({ name: 'archive_problem', type: 'text', nullable: true })
  archiveProblem: string | null;

  @Column({ name: 'archive_checked_at', type: 'timestamptz', nullable: true })
  archiveCheckedAt: Date | null;

  /**
   * A broken archive is whole up to here: the recovery window stops at this moment and
   * before this position (null: nothing is whole, or the archive is not broken).
   */
  @Column({ name: 'intact_until', type: 'timestamptz', nullable: true })
  intactUntil: Date | null;

  @Column({ name: 'intact_lsn', type: 'bigint', nullable: true, transformer: lsnColumn })
  intactLsn: bigint | null;

  /** When the newest object of the archive was written, as the object store lists it. */
  @Column({ name: 'newest_object_at', type: 'timestamptz', nullable: true })
  newestObjectAt: Date | null;

  @Column({ name: 'lease_owner', type: 'text', nullable: true })
  leaseOwner: string | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt: Date | null;
}

/**
 * `from`, or the base backup a pending restore holds when that is older: what the window
 * needs from then on is kept (backups, and the WAL after them).
 */
export function heldFrom(
  from: Date,
  archive: Pick<ArchiveEntity, 'holdFrom' | 'holdUntil'>,
  now = new Date(),
): Date {
  const { holdFrom, holdUntil } = archive;
  return holdFrom && holdUntil && holdUntil > now && holdFrom < from ? holdFrom : from;
}

/**
 * SQL: the receiver of this row should run. A pause for a restore that never resumed it
 * (a provisioner that died at the wrong moment) lapses after an hour.
 */
export const RECEIVER_ACTIVE = `enabled AND (NOT paused_for_restore OR paused_at < now() - interval '1 hour')`;

/**
 * How far restores can reach in the archive: every commit up to `to`, every position below
 * `lsn`; a broken archive stops before its first missing or changed segment
 * (docs/api/pitr.md#archive-health).
 */
export function archiveReach(
  archive: Pick<
    ArchiveEntity,
    'windowTo' | 'archivedLsn' | 'archiveState' | 'intactUntil' | 'intactLsn'
  >,
): { to: Date | null; lsn: bigint | null } {
  const { windowTo, archivedLsn } = archive;
  if (archive.archiveState !== 'broken' || archive.intactLsn === null)
    return { to: windowTo, lsn: archivedLsn };
  const stop = archive.intactUntil;
  const to = windowTo && stop ? (stop < windowTo ? stop : windowTo) : null;
  const lastWhole = archive.intactLsn - 1n;
  const lsn = archivedLsn !== null && archivedLsn < lastWhole ? archivedLsn : lastWhole;
  return { to, lsn };
}
