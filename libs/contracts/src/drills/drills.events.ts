import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsOptional, IsString, ValidateNested } from 'class-validator';
import { event } from '../catalogue.js';
import type { DrillCheckName } from './drills.types.js';
import { DRILL_CHECK_NAMES } from './drills.types.js';

/** One check, as the events carry it. */
export class DrillCheckResult {
  @IsIn(DRILL_CHECK_NAMES)
  name!: DrillCheckName;

  @IsBoolean()
  passed!: boolean;

  @IsString()
  detail!: string;
}

/** Payload of DRILL_EVENTS: a drill ended (docs/api/drills.md). */
export class DrillFinished {
  @IsString()
  drill_id!: string;

  @IsString()
  database_id!: string;

  @IsString()
  project_id!: string;

  @IsIn(['passed', 'failed'])
  status!: 'passed' | 'failed';

  @IsOptional()
  @IsString()
  backup_id?: string;

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => DrillCheckResult)
  checks!: DrillCheckResult[];

  @IsOptional()
  @IsString()
  error?: string;
}

/** Events published by database-provisioner about restore drills on EVENTS_EXCHANGE. */
export const DRILL_EVENTS = {
  /** Every check passed: the database was proven restorable. */
  passed: event('drill.passed', DrillFinished, 'database-provisioner'),
  /** A check failed, or the drill's restore did. */
  failed: event('drill.failed', DrillFinished, 'database-provisioner'),
} as const;
