import { IntersectionType } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { DatabaseRef } from '../databases/databases.messages.js';
import { RestoreBackupDto } from '../databases/databases.dto.js';
import { IsIdOf, IsRef } from '../message-rules.js';

/** A backup, named as the API names it. */
export class BackupRef extends DatabaseRef {
  @IsRef()
  backup_id: string;
}

/** backups.restore: the backup and where it goes (RestoreBackupDto's rules). */
export class BackupRestoreRequest extends IntersectionType(BackupRef, RestoreBackupDto) {}

/**
 * backups.restore-plan (between services): a backup by its id, and the database it is
 * asked for (or its newest completed one); a backup of another database is not found.
 */
export class BackupPlanRequest {
  /** Left out: the database's newest completed backup (a restore drill's). */
  @IsOptional()
  @IsIdOf('bkp')
  backup_id?: string;

  @IsIdOf('db')
  database_id: string;
}
