import { IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsObject, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';
import { IsDatabaseName } from '../databases/databases.dto.js';
import {
  DatabaseIdRef,
  DatabaseRef,
  RestoreBranchFields,
} from '../databases/databases.messages.js';
import { IsIdOf } from '../message-rules.js';
import { IsTargetTime } from './target-time.js';
import { EnablePitrDto, LSN_PATTERN, PitrRestoreDto, WalPageQueryDto } from './pitr.dto.js';

/** pitr.enable: the gateway's body and the database it names. */
export class EnablePitrRequest extends IntersectionType(EnablePitrDto, DatabaseRef) {}

/** pitr.wal: one page of the archive of the database it names. */
export class WalPageRequest extends IntersectionType(WalPageQueryDto, DatabaseRef) {}

/**
 * pitr.restore: the target (and target_database) for the database it names; from the
 * provisioner, a branch's fields, passed on to restores.create.
 */
export class PitrRestoreRequest extends IntersectionType(PitrRestoreDto, DatabaseRef) {
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RestoreBranchFields)
  branch?: RestoreBranchFields;
}

/** Where a recorded PITR restore stops: one of the three, as pitr-worker resolved it. */
export class PitrTargetFields {
  @IsOptional()
  @IsTargetTime()
  target_time?: string;

  @IsOptional()
  @IsString()
  @Matches(LSN_PATTERN)
  target_lsn?: string;

  @IsOptional()
  @IsDatabaseName()
  target_restore_point?: string;
}

/** pitr.restore-plan: what the provisioner asks at each attempt of a PITR restore. */
export class PitrPlanRequest extends IntersectionType(PitrTargetFields, DatabaseIdRef) {}

/** pitr.backups-in-use: the databases whose kept backups are asked about. */
export class DatabaseIdsRequest {
  @IsArray()
  @IsIdOf('db', { each: true })
  database_ids: string[];
}
