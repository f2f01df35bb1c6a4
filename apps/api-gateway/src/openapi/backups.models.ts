import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type {
  Backup,
  BackupStatus,
  BackupType,
  CreatedBackup,
  DownloadLink,
} from '@pgcloud/contracts';

const BACKUP_ID = { example: 'bkp_k3v9x0q2m8t4b7w1c5zd', pattern: '^bkp_[0-9a-z]{20}$' };
const STATUSES: BackupStatus[] = ['pending', 'running', 'completed', 'failed'];
const TYPES: BackupType[] = ['manual', 'automated'];

/** A base backup of a database. */
@ApiSchema({ name: 'Backup' })
export class BackupModel implements Backup {
  @ApiProperty(BACKUP_ID)
  id: string;

  @ApiProperty({ example: 'db_k3v9x0q2m8t4b7w1c5zd' })
  database_id: string;

  @ApiProperty({ enum: TYPES })
  type: BackupType;

  @ApiProperty({ enum: STATUSES })
  status: BackupStatus;

  @ApiProperty({ example: 7340032, description: 'Bytes of the object; 0 until completed.' })
  size_bytes: number;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'When streaming began.' })
  started_at?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Completed backups.' })
  completed_at?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Automated backups: deleted after this (7 days Free, 30 days Pro).',
  })
  expires_at?: string;

  @ApiPropertyOptional({
    example: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    description: "Hex SHA-256 of the object's bytes (completed backups).",
  })
  checksum_sha256?: string;

  @ApiPropertyOptional({ example: '0/2000028', description: 'WAL position the backup starts at.' })
  start_lsn?: string;

  @ApiPropertyOptional({ example: '0/2000100', description: 'WAL position it is consistent at.' })
  end_lsn?: string;

  @ApiPropertyOptional({ description: 'Why it failed, when it did.' })
  error?: string;
}

/** GET .../backups. */
@ApiSchema({ name: 'BackupList' })
export class BackupListModel {
  @ApiProperty({ type: [BackupModel], description: 'Newest first.' })
  backups: BackupModel[];
}

/** POST .../backups. */
@ApiSchema({ name: 'CreatedBackup' })
export class CreatedBackupModel implements CreatedBackup {
  @ApiProperty(BACKUP_ID)
  id: string;

  @ApiProperty({ enum: TYPES, example: 'manual' })
  type: BackupType;

  @ApiProperty({ enum: STATUSES, example: 'pending' })
  status: BackupStatus;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** GET .../backups/{backup_id}/download. */
@ApiSchema({ name: 'DownloadLink' })
export class DownloadLinkModel implements DownloadLink {
  @ApiProperty({
    description:
      'A pre-signed GET of the archive (`<database>-<backup_id>.tar.zst`: a tar of the data directory, zstd).',
  })
  download_url: string;

  @ApiProperty({ format: 'date-time', description: 'The link stops working then (15 minutes).' })
  expires_at: string;
}
