import { IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNotIn,
  IsObject,
  IsOptional,
  Matches,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsDatabaseName, RESERVED_DATABASE_NAMES } from '../databases/databases.dto.js';
import { DatabaseRef, RestoreBranchFields } from '../databases/databases.messages.js';
import { IsIdOf, IsRef } from '../message-rules.js';
import { PitrTargetFields } from '../pitr/pitr.messages.js';
import type { RestoreKind } from './restores.types.js';
import { RESTORE_KINDS } from './restores.types.js';

/**
 * restores.create: a restore of a database, asked for by backup-service (or pitr-worker,
 * with the target it resolved).
 */
export class CreateRestoreRequest extends IntersectionType(DatabaseRef, PitrTargetFields) {
  @IsIn(RESTORE_KINDS)
  kind: RestoreKind;

  @IsOptional()
  @IsIdOf('bkp')
  backup_id?: string;

  @IsOptional()
  @IsDatabaseName()
  @Matches(/^(?!pg_)/, { message: 'name must not start with pg_ (reserved by PostgreSQL)' })
  @IsNotIn(RESERVED_DATABASE_NAMES, { message: 'name is reserved' })
  target_database?: string;

  /** A branch: the new database (target_database) is made in this project, with these. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RestoreBranchFields)
  branch?: RestoreBranchFields;
}

/**
 * restores.check: every check restores.create makes, and nothing written (a dry run);
 * with the plan's size, for an estimate of the time it would take.
 */
export class CheckRestoreRequest extends CreateRestoreRequest {
  @IsInt()
  @Min(0)
  base_backup_size_bytes: number;

  @IsInt()
  @Min(0)
  wal_files: number;
}

/** restores.list: a database's restores, newest first. */
export class RestoreListRequest extends DatabaseRef {
  @IsOptional()
  @IsIn(RESTORE_KINDS)
  kind?: RestoreKind;
}

/** A restore, named as the API names it. */
export class RestoreRef extends DatabaseRef {
  @IsRef()
  restore_id: string;
}

/** restores.get: one restore; RESTORE_NOT_FOUND for one of another kind. */
export class RestoreGetRequest extends RestoreRef {
  @IsOptional()
  @IsIn(RESTORE_KINDS)
  kind?: RestoreKind;
}
