import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type {
  CreatedPitrRestore,
  CreatedRestore,
  Restore,
  RestoreDryRun,
  RestoreKind,
  RestorePlanSummary,
  RestorePhase,
  RestoreProgress,
  RestoreStatus,
} from '@pgcloud/contracts';
import { RESTORE_PHASES } from '@pgcloud/contracts';

const RESTORE_ID = { example: 'rstr_k3v9x0q2m8t4b7w1c5zd', pattern: '^rstr_[0-9a-z]{20}$' };
const STATUSES: RestoreStatus[] = ['pending', 'running', 'completed', 'failed', 'cancelled'];

/** A restore's numbers known so far; none of them goes back. */
@ApiSchema({ name: 'RestoreProgress' })
export class RestoreProgressModel implements RestoreProgress {
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

/** A restore of a database, from a backup or to a point in time. */
@ApiSchema({ name: 'Restore' })
export class RestoreModel implements Restore {
  @ApiProperty(RESTORE_ID)
  id: string;

  @ApiProperty({ enum: ['backup', 'pitr'] })
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

  @ApiProperty({ enum: STATUSES })
  status: RestoreStatus;

  @ApiProperty({
    enum: RESTORE_PHASES,
    example: 'downloading',
    description: 'Where its work is, in this order; a failed restore keeps the phase it failed in.',
  })
  phase: RestorePhase;

  @ApiProperty({ type: RestoreProgressModel })
  progress: RestoreProgressModel;

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
@ApiSchema({ name: 'RestoreList' })
export class RestoreListModel {
  @ApiProperty({ type: [RestoreModel], description: 'Newest first.' })
  restores: RestoreModel[];
}

/** POST .../backups/{backup_id}/restore. */
@ApiSchema({ name: 'CreatedRestore' })
export class CreatedRestoreModel implements CreatedRestore {
  @ApiProperty(RESTORE_ID)
  restore_id: string;

  @ApiProperty({ enum: STATUSES, example: 'pending' })
  status: RestoreStatus;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiPropertyOptional({ example: 'orders-restored' })
  target_database?: string;
}

/** POST .../pitr/restore. */
@ApiSchema({ name: 'CreatedPitrRestore' })
export class CreatedPitrRestoreModel implements CreatedPitrRestore {
  @ApiProperty(RESTORE_ID)
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

  @ApiProperty({ enum: STATUSES, example: 'pending' })
  status: RestoreStatus;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiPropertyOptional({
    example: 'orders-restored',
    description: 'When restoring into a new database.',
  })
  target_database?: string;
}

/** What a restore would do: POST ...restore?dry_run=true. */
@ApiSchema({ name: 'RestorePlanSummary' })
export class RestorePlanSummaryModel implements RestorePlanSummary {
  @ApiProperty({ enum: ['backup', 'pitr'] })
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
@ApiSchema({ name: 'RestoreDryRun' })
export class RestoreDryRunModel implements RestoreDryRun {
  @ApiProperty({ type: RestorePlanSummaryModel })
  plan: RestorePlanSummaryModel;
}
