import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { idSchema } from '../ids.js';
import { RESTORE_STATUSES } from '../restores/restores.types.js';
import type { RestoreStatus } from '../restores/restores.types.js';

/** WAL receiver states (docs/api/pitr.md#the-archive-and-the-receiver). */
export const WAL_RECEIVER_STATES = ['starting', 'running', 'stopped', 'error'] as const;
export type WalReceiverState = (typeof WAL_RECEIVER_STATES)[number];

const RECEIVER_STATE = {
  enum: WAL_RECEIVER_STATES,
  description:
    '`starting` (launching or reconnecting), `running` (streaming), `stopped` (PITR disabled, or the database restoring), `error` (the last attempt failed; retrying with backoff).',
};
const SEGMENT = { example: '000000010000000000000003' };

/** What the last look at the archive in the object store found (docs/api/pitr.md#archive-health). */
export const ARCHIVE_STATES = ['healthy', 'stale', 'broken'] as const;
export type ArchiveState = (typeof ARCHIVE_STATES)[number];

/** The archive as the object store holds it, checked at least every minute. */
export class ArchiveHealth {
  @ApiProperty({
    enum: ARCHIVE_STATES,
    description:
      '`healthy`; `stale`: nothing new archived for ARCHIVE_STALE_SECONDS while the primary wrote WAL; `broken`: an object of a segment the recovery window needs is missing or changed.',
  })
  state: ArchiveState;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When the newest object of the archive was written; null when none is there.',
  })
  newest_object_at: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Seconds since the newest object was written (at the check), rounded down.',
  })
  lag_seconds: number;

  @ApiProperty({ format: 'date-time' })
  checked_at: string;

  @ApiPropertyOptional({
    example: 'segment 000000010000000000000005 is missing from the object store',
    description: 'What is wrong, when the state is not `healthy`.',
  })
  problem?: string;
}

/** A time range every second of which a PITR restore can reach. */
export class RecoveryWindowRange {
  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;
}

/** GET .../pitr/config. Never enabled: everything but `enabled` is null. */
export class PitrConfig {
  @ApiProperty()
  enabled: boolean;

  @ApiProperty({
    ...idSchema('bkp'),
    type: String,
    nullable: true,
    description: 'The base backup the archive starts from; null when never enabled.',
  })
  base_backup_id: string | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 7,
    description: 'Null when never enabled.',
  })
  retention_days: number | null;

  @ApiProperty({
    type: RecoveryWindowRange,
    nullable: true,
    description: 'Null until the first base backup has completed and the archive covers its end.',
  })
  recovery_window: RecoveryWindowRange | null;

  @ApiPropertyOptional({
    type: ArchiveHealth,
    nullable: true,
    description: 'Only while enabled; null until the first check after enabling.',
  })
  archive?: ArchiveHealth | null;
}

/** POST .../pitr/enable. */
export class EnabledPitr {
  @ApiProperty({ type: Boolean, enum: [true] })
  enabled: true;

  @ApiProperty({
    ...idSchema('bkp'),
    description: 'The base backup enabling took (listed as automated).',
  })
  base_backup_id: string;

  @ApiProperty({ ...RECEIVER_STATE, example: 'starting' })
  wal_receiver_status: WalReceiverState;
}

/** POST .../pitr/disable. */
export class DisabledPitr {
  @ApiProperty({ type: Boolean, enum: [false] })
  enabled: false;

  @ApiProperty({ enum: ['stopped'] })
  wal_receiver_status: 'stopped';
}

/** One completed WAL segment in the archive. */
export class WalArchiveEntry {
  @ApiProperty(SEGMENT)
  filename: string;

  @ApiProperty({ type: 'integer', example: 16777216 })
  size_bytes: number;

  @ApiProperty({ format: 'date-time' })
  archived_at: string;
}

/** GET .../pitr/wal: one page of the archive; the totals count every completed segment. */
export class WalArchivePage {
  @ApiProperty({ type: [WalArchiveEntry], description: 'Oldest first.' })
  archives: WalArchiveEntry[];

  @ApiProperty({ type: 'integer', description: 'Completed segments in the whole archive.' })
  total_count: number;

  @ApiProperty({ type: 'integer', description: 'Their bytes.' })
  total_size_bytes: number;

  @ApiProperty({
    type: String,
    nullable: true,
    ...SEGMENT,
    description: 'The `cursor` of the next page; null on the last page.',
  })
  next_cursor: string | null;
}

/**
 * GET .../pitr/recovery-window. All null while the first base backup is still being taken.
 */
export class RecoveryWindow {
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'The end of the oldest retained base backup of the current archive; null while the first is being taken.',
  })
  from: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Every transaction committed at or before it is in the archive.',
  })
  to: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  base_backup_time: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'The time of the newest archived WAL data.',
  })
  latest_wal_time: string | null;
}

/** GET .../pitr/receiver-status and POST .../pitr/restart-receiver. */
export class WalReceiverStatus {
  @ApiProperty(RECEIVER_STATE)
  status: WalReceiverState;

  @ApiProperty({ format: 'date-time', description: 'When the current receiver was started.' })
  started_at: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '000000010000000000000004.partial',
    description: 'The newest archived segment; `.partial` while it is still being written.',
  })
  last_wal_file: string | null;

  @ApiProperty({ type: 'integer', description: 'Bytes streamed by the current receiver.' })
  bytes_received: number;

  @ApiProperty({ type: 'integer', description: 'Failures since started_at.' })
  errors: number;

  @ApiProperty({ type: 'integer', description: 'now - recovery window `to`, rounded down.' })
  lag_seconds: number;
}

/** pitr.backups-in-use: database id -> ISO time; backups completed since then stay. */
export interface BackupsInUse {
  keep_from: Record<string, string>;
}

/** A named WAL position of the current archive (POST .../pitr/restore-points). */
export class RestorePoint {
  @ApiProperty({ example: 'before-migration' })
  name: string;

  @ApiProperty({
    example: '0/3000148',
    description: 'Where its record ends in the WAL, as PostgreSQL prints positions.',
  })
  lsn: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** GET .../pitr/restore-points. */
export class RestorePointList {
  @ApiProperty({ type: [RestorePoint], description: "The current archive's, oldest first." })
  restore_points: RestorePoint[];
}

/** POST .../pitr/restore: the new restore and its target, exactly one of the three. */
export class CreatedPitrRestore {
  @ApiProperty(idSchema('rstr'))
  restore_id: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-22T10:15:30.123456Z',
    description:
      'A time target, to the microsecond; for `latest`, the moment the request was accepted.',
  })
  target_time?: string;

  @ApiPropertyOptional({ example: '0/3000148', description: 'A WAL position target.' })
  target_lsn?: string;

  @ApiPropertyOptional({ example: 'before-migration', description: 'A restore point target.' })
  target_restore_point?: string;

  @ApiProperty({ enum: RESTORE_STATUSES, example: 'pending' })
  status: RestoreStatus;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiPropertyOptional({
    example: 'orders-restored',
    description: 'When restoring into a new database.',
  })
  target_database?: string;
}
