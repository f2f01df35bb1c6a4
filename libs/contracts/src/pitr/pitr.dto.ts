import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';
import { IsDatabaseName } from '../databases/databases.dto.js';
import { parseTargetTime } from './target-time.js';

/**
 * The most retention_days any tier gets, and the most a Free user gets (spec/decisions.md
 * section 7).
 */
export const PITR_MAX_RETENTION_DAYS = 35;
export const PITR_FREE_MAX_RETENTION_DAYS = 7;

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

/** POST .../pitr/restore. */
export class PitrRestoreDto {
  @ApiProperty({
    example: '2026-11-22T10:15:30.123456Z',
    description:
      'The moment to restore to, inclusive (ISO 8601, up to microseconds), or `latest`: the moment the request is accepted.',
  })
  @IsString()
  @ValidateBy({
    name: 'isTargetTime',
    validator: {
      validate: (value: unknown) =>
        value === 'latest' || (typeof value === 'string' && parseTargetTime(value) !== undefined),
      defaultMessage: () =>
        'target_time must be an ISO 8601 timestamp with a zone (up to microseconds), or latest',
    },
  })
  target_time: string;

  @ApiPropertyOptional({
    description: 'Restore into a new database of this name instead of in place.',
  })
  @IsOptional()
  @IsDatabaseName()
  target_database?: string;
}
