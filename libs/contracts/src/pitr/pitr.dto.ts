import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';
import { IsDatabaseName } from '../databases/databases.dto.js';
import { LSN_PATTERN, parseTargetTime, targetCount } from './target-time.js';

/**
 * The most retention_days any tier gets, and the most a Free user gets (docs/api/pitr.md#configuration).
 */
export const PITR_MAX_RETENTION_DAYS = 35;
export const PITR_FREE_MAX_RETENTION_DAYS = 7;
/** Restore points one archive keeps at most, by tier. */
export const RESTORE_POINT_LIMITS = { free: 20, pro: 200 } as const;

/** POST .../pitr/enable. */
export class EnablePitrDto {
  @ApiProperty({
    minimum: 1,
    maximum: PITR_MAX_RETENTION_DAYS,
    description: `Days of WAL kept for restores (Free: at most ${PITR_FREE_MAX_RETENTION_DAYS}).`,
  })
  @IsInt()
  @Min(1)
  @Max(PITR_MAX_RETENTION_DAYS)
  retention_days: number;
}

/** GET .../pitr/wal query. */
export class WalPageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page.' })
  @IsOptional()
  @IsString()
  @Matches(/^[0-9A-F]{24}$/, { message: 'cursor must be a next_cursor of this list' })
  cursor?: string;
}

export { LSN_PATTERN, PITR_TARGET_FIELDS, targetCount } from './target-time.js';

/**
 * POST .../pitr/restore. Exactly one target (docs/api/pitr.md#restoring): the rule sits on
 * target_time, which is checked even when absent; the others check their own form. The
 * OpenAPI document shows the body as one of PITR_RESTORE_BODIES, which this class validates.
 */
export class PitrRestoreDto {
  @ValidateBy({
    name: 'isTargetTime',
    validator: {
      validate: (value: unknown) =>
        value === undefined ||
        value === 'latest' ||
        (typeof value === 'string' && parseTargetTime(value) !== undefined),
      defaultMessage: () =>
        'target_time must be an ISO 8601 timestamp with a zone (up to microseconds), or latest',
    },
  })
  @ValidateBy({
    name: 'oneTarget',
    validator: {
      validate: (_value: unknown, args) => targetCount(args?.object ?? {}) === 1,
      defaultMessage: () => 'give exactly one of target_time, target_lsn and target_restore_point',
    },
  })
  target_time?: string;

  @IsOptional()
  @IsString()
  @Matches(LSN_PATTERN, { message: 'target_lsn must be a WAL position such as 0/3000148' })
  target_lsn?: string;

  @IsOptional()
  @IsDatabaseName()
  target_restore_point?: string;

  @IsOptional()
  @IsDatabaseName()
  target_database?: string;
}

/** What every shape of the PITR restore body may give besides its target. */
class PitrRestoreOptionsDto {
  @ApiPropertyOptional({
    description: 'Restore into a new database of this name instead of in place.',
  })
  target_database?: string;
}

/** POST .../pitr/restore to a moment. */
export class PitrRestoreToTimeDto extends PitrRestoreOptionsDto {
  @ApiProperty({
    example: '2026-11-22T10:15:30.123456Z',
    description:
      'The moment to restore to, inclusive (ISO 8601, up to microseconds), or `latest`: the moment the request is accepted.',
  })
  target_time: string;
}

/** POST .../pitr/restore to a WAL position. */
export class PitrRestoreToLsnDto extends PitrRestoreOptionsDto {
  @ApiProperty({
    example: '0/3000148',
    description:
      'A WAL position (`X/XXXXXXXX`) to restore to, inclusive, within the recovery window.',
  })
  target_lsn: string;
}

/** POST .../pitr/restore to a restore point. */
export class PitrRestoreToRestorePointDto extends PitrRestoreOptionsDto {
  @ApiProperty({
    example: 'before-migration',
    description: 'The name of a restore point of the current archive (POST pitr/restore-points).',
  })
  target_restore_point: string;
}

/**
 * The body of POST .../pitr/restore as the OpenAPI document gives it: one of three shapes,
 * each with its one target and the options they share.
 */
export const PITR_RESTORE_BODIES = [
  PitrRestoreToTimeDto,
  PitrRestoreToLsnDto,
  PitrRestoreToRestorePointDto,
];

/** POST .../pitr/restore-points. */
export class CreateRestorePointDto {
  @ApiProperty({
    example: 'before-migration',
    description: 'Unique in the archive; the rules of database names.',
  })
  @IsDatabaseName()
  name: string;
}
