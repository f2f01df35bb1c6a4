import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type {
  DisabledPitr,
  EnabledPitr,
  PitrConfig,
  RecoveryWindow,
  RecoveryWindowRange,
  RestorePoint,
  RestorePointList,
  WalArchiveEntry,
  WalArchivePage,
  WalReceiverState,
  WalReceiverStatus,
} from '@pgcloud/contracts';

const BACKUP_ID = { example: 'bkp_k3v9x0q2m8t4b7w1c5zd', pattern: '^bkp_[0-9a-z]{20}$' };
const RECEIVER_STATES: WalReceiverState[] = ['starting', 'running', 'stopped', 'error'];
const RECEIVER_STATE = {
  enum: RECEIVER_STATES,
  description:
    '`starting` (launching or reconnecting), `running` (streaming), `stopped` (PITR disabled, or the database restoring), `error` (the last attempt failed; retrying with backoff).',
};
const SEGMENT = { example: '000000010000000000000003' };

/** The span a PITR restore can reach. */
@ApiSchema({ name: 'RecoveryWindowRange' })
export class RecoveryWindowRangeModel implements RecoveryWindowRange {
  @ApiProperty({ format: 'date-time' })
  from: string;

  @ApiProperty({ format: 'date-time' })
  to: string;
}

/** GET .../pitr/config. */
@ApiSchema({ name: 'PitrConfig' })
export class PitrConfigModel implements PitrConfig {
  @ApiProperty()
  enabled: boolean;

  @ApiProperty({
    ...BACKUP_ID,
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
    type: RecoveryWindowRangeModel,
    nullable: true,
    description: 'Null until the first base backup has completed and the archive covers its end.',
  })
  recovery_window: RecoveryWindowRangeModel | null;
}

/** POST .../pitr/enable. */
@ApiSchema({ name: 'EnabledPitr' })
export class EnabledPitrModel implements EnabledPitr {
  @ApiProperty({ type: Boolean, enum: [true] })
  enabled: true;

  @ApiProperty({
    ...BACKUP_ID,
    description: 'The base backup enabling took (listed as automated).',
  })
  base_backup_id: string;

  @ApiProperty({ ...RECEIVER_STATE, example: 'starting' })
  wal_receiver_status: WalReceiverState;
}

/** POST .../pitr/disable. */
@ApiSchema({ name: 'DisabledPitr' })
export class DisabledPitrModel implements DisabledPitr {
  @ApiProperty({ type: Boolean, enum: [false] })
  enabled: false;

  @ApiProperty({ enum: ['stopped'] })
  wal_receiver_status: 'stopped';
}

/** One completed WAL segment in the archive. */
@ApiSchema({ name: 'WalArchiveEntry' })
export class WalArchiveEntryModel implements WalArchiveEntry {
  @ApiProperty(SEGMENT)
  filename: string;

  @ApiProperty({ type: 'integer', example: 16777216 })
  size_bytes: number;

  @ApiProperty({ format: 'date-time' })
  archived_at: string;
}

/** GET .../pitr/wal. */
@ApiSchema({ name: 'WalArchivePage' })
export class WalArchivePageModel implements WalArchivePage {
  @ApiProperty({ type: [WalArchiveEntryModel], description: 'Oldest first.' })
  archives: WalArchiveEntryModel[];

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

/** A named WAL position of the current archive. */
@ApiSchema({ name: 'RestorePoint' })
export class RestorePointModel implements RestorePoint {
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
@ApiSchema({ name: 'RestorePointList' })
export class RestorePointListModel implements RestorePointList {
  @ApiProperty({ type: [RestorePointModel], description: "The current archive's, oldest first." })
  restore_points: RestorePointModel[];
}

/** GET .../pitr/recovery-window. */
@ApiSchema({ name: 'RecoveryWindow' })
export class RecoveryWindowModel implements RecoveryWindow {
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
@ApiSchema({ name: 'WalReceiverStatus' })
export class WalReceiverStatusModel implements WalReceiverStatus {
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
