import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsDatabaseName } from '../databases/databases.dto.js';

/** The most retention_days any tier gets, and the most a Free user gets (decisions.md section 7). */
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
  @MaxLength(200)
  cursor?: string;
}

/** `latest`, or ISO 8601 with up to six decimals and a zone (decisions.md section 7). */
export const TARGET_TIME_PATTERN =
  /^(latest|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2}))$/;

/** POST .../pitr/restore. */
export class PitrRestoreDto {
  @ApiProperty({
    example: '2026-11-22T10:15:30.123456Z',
    description:
      'The moment to restore to, inclusive (ISO 8601, up to microseconds), or `latest`: the moment the request is accepted.',
  })
  @IsString()
  @Matches(TARGET_TIME_PATTERN, {
    message: 'target_time must be an ISO 8601 timestamp with a zone, or latest',
  })
  target_time: string;

  @ApiPropertyOptional({
    description: 'Restore into a new database of this name instead of in place.',
  })
  @IsOptional()
  @IsDatabaseName()
  target_database?: string;
}
