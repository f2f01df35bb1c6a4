import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { idSchema } from '../ids.js';

/** Where a backup is in its life (docs/api/backups.md). */
export const BACKUP_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export type BackupStatus = (typeof BACKUP_STATUSES)[number];

/** `manual` (asked for) or `automated` (the daily schedule, and PITR's base backups). */
export const BACKUP_TYPES = ['manual', 'automated'] as const;
export type BackupType = (typeof BACKUP_TYPES)[number];

/** A base backup of a database, as the API shows it. */
export class Backup {
  @ApiProperty(idSchema('bkp'))
  id: string;

  @ApiProperty({ example: 'db_k3v9x0q2m8t4b7w1c5zd' })
  database_id: string;

  @ApiProperty({ enum: BACKUP_TYPES })
  type: BackupType;

  @ApiProperty({ enum: BACKUP_STATUSES })
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
export class BackupList {
  @ApiProperty({ type: [Backup], description: 'Newest first.' })
  backups: Backup[];
}

/** POST .../backups: what the answer shows of the new backup. */
export class CreatedBackup {
  @ApiProperty(idSchema('bkp'))
  id: string;

  @ApiProperty({ enum: BACKUP_TYPES, example: 'manual' })
  type: BackupType;

  @ApiProperty({ enum: BACKUP_STATUSES, example: 'pending' })
  status: BackupStatus;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** GET .../backups/{backup_id}/download. */
export class DownloadLink {
  @ApiProperty({
    description:
      'A pre-signed GET of the archive (`<database>-<backup_id>.tar.zst`: a tar of the data directory, zstd).',
  })
  download_url: string;

  @ApiProperty({ format: 'date-time', description: 'The link stops working then (15 minutes).' })
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
