import { IsIn, IsOptional, IsString } from 'class-validator';
import { event } from '../catalogue.js';
import type { BackupStatus } from './backups.types.js';
import { BACKUP_STATUSES } from './backups.types.js';

/** Payload of BACKUP_EVENTS.statusChanged. */
export class BackupStatusChanged {
  @IsString()
  backup_id!: string;

  @IsString()
  database_id!: string;

  @IsString()
  project_id!: string;

  @IsIn(BACKUP_STATUSES)
  status!: BackupStatus;

  @IsOptional()
  @IsString()
  error?: string;
}

/** Events published by backup-service on EVENTS_EXCHANGE. */
export const BACKUP_EVENTS = {
  /** A backup moved to running, completed or failed. */
  statusChanged: event('backup.status-changed', BackupStatusChanged, 'backup-service'),
} as const;
