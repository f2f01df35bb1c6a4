import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsISO8601,
  IsNotIn,
  IsObject,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsTargetTime, LSN_PATTERN, targetCount } from '../pitr/target-time.js';

/**
 * `expires_at` of a create and of a PATCH (docs/api/databases.md#expiry): an ISO 8601 time
 * that names its zone, or null; the bounds (future, 30 or 365 days) are the provisioner's.
 */
function IsExpiresAt(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: String,
      format: 'date-time',
      nullable: true,
      example: '2026-12-01T12:00:00Z',
      description,
    }),
    IsOptional(),
    IsISO8601({ strict: true }, { message: 'expires_at must be an ISO 8601 timestamp, or null' }),
    Matches(/(Z|[+-]\d{2}:\d{2})$/, { message: 'expires_at must name its time zone' }),
  );
}

/** Database names: lowercase letters, digits, `_` and `-`, a letter first, 1 to 63 long. */
export const DATABASE_NAME_PATTERN = /^[a-z][a-z0-9_-]*$/;

/** True when `value` keeps the name rules, so it may name a database at all. */
export function isDatabaseName(value: string): boolean {
  return value.length <= 63 && DATABASE_NAME_PATTERN.test(value);
}

/**
 * The name rules of docs/api/databases.md on a DTO property: a string of 1 to 63
 * characters of DATABASE_NAME_PATTERN. The cloud and the local daemon share them.
 */
export function IsDatabaseName(): PropertyDecorator {
  const rules = [
    IsString(),
    Length(1, 63, { message: 'name must be 1 to 63 characters long' }),
    Matches(DATABASE_NAME_PATTERN, {
      message:
        'name may hold only lowercase letters, digits, underscores and hyphens, and must start with a letter',
    }),
  ];
  return (target, property) => rules.forEach((rule) => rule(target, property));
}

/** Names PostgreSQL or pgcloud keep for themselves inside every server. */
export const RESERVED_DATABASE_NAMES = [
  'postgres',
  'template0',
  'template1',
  'pgcloud_replication',
  // CloudNativePG's own roles (the kubernetes driver's servers carry them).
  'streaming_replica',
  'cnpg_pooler_pgbouncer',
];

/** Present (null included, which the rules refuse), unlike a part left out. */
const GIVEN = ValidateIf((_object: object, value: unknown) => value !== undefined);

/**
 * A server's size: vCPUs, GiB of memory, GiB of storage (docs/api/databases.md). A part left
 * out takes its default (a branch: its source's), so none is filled in here.
 */
export class DatabaseConfigDto {
  @ApiProperty({
    required: false,
    minimum: 0.25,
    maximum: 16,
    default: 1,
    description: "vCPUs (Free: at most 1); a branch takes its source's when left out.",
  })
  @GIVEN
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.25)
  @Max(16)
  cpu?: number;

  @ApiProperty({
    required: false,
    minimum: 0.25,
    maximum: 64,
    default: 1,
    description: "GiB of memory (Free: at most 2); a branch takes its source's when left out.",
  })
  @GIVEN
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.25)
  @Max(64)
  memory?: number;

  @ApiProperty({
    required: false,
    minimum: 1,
    maximum: 1024,
    default: 10,
    description: "GiB of storage (Free: at most 10); a branch takes its source's when left out.",
  })
  @GIVEN
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(1)
  @Max(1024)
  storage?: number;
}

/**
 * `from` of POST /projects/{project_id}/databases: the database a branch is made from
 * (docs/api/databases.md#branches), and at most one point in its past; none is now.
 */
export class BranchFromDto {
  @ApiProperty({ example: 'shop', description: 'The source database, in `project_id`.' })
  @IsDatabaseName()
  database: string;

  @ApiPropertyOptional({
    example: 'prj_k3v9x0q2m8t4b7w1c5zd',
    description: "The source's project, one of the caller's; the new database's when left out.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  project_id?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Branch as of this time (a PITR restore into the new database).',
  })
  @IsOptional()
  @IsTargetTime()
  @ValidateBy({
    name: 'atMostOneTarget',
    validator: {
      validate: (_value: unknown, args) => targetCount(args?.object ?? {}) <= 1,
      defaultMessage: () => 'give at most one of target_time, target_lsn and target_restore_point',
    },
  })
  target_time?: string;

  @ApiPropertyOptional({ example: '0/3000148', description: 'Branch through this WAL position.' })
  @IsOptional()
  @IsString()
  @Matches(LSN_PATTERN, { message: 'target_lsn must be a WAL position such as 0/3000148' })
  target_lsn?: string;

  @ApiPropertyOptional({
    example: 'before-migration',
    description: 'Branch at this restore point.',
  })
  @IsOptional()
  @IsDatabaseName()
  target_restore_point?: string;
}

/** Body of POST /projects/{project_id}/databases. */
export class CreateDatabaseDto {
  @ApiProperty({
    example: 'orders',
    minLength: 1,
    maxLength: 63,
    pattern: DATABASE_NAME_PATTERN.source,
  })
  @IsDatabaseName()
  @Matches(/^(?!pg_)/, { message: 'name must not start with pg_ (reserved by PostgreSQL)' })
  @IsNotIn(RESERVED_DATABASE_NAMES, { message: 'name is reserved' })
  name: string;

  @ApiPropertyOptional({
    example: 'local',
    description: "A listed region; the project's default_region when left out.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  region?: string;

  @ApiPropertyOptional({ type: () => DatabaseConfigDto })
  @IsOptional()
  // ValidateNested alone takes an array (and checks its items): config is one object.
  @IsObject({ message: 'config must be an object' })
  @ValidateNested({ message: 'config must be an object' })
  @Type(() => DatabaseConfigDto)
  config?: DatabaseConfigDto;

  @ApiPropertyOptional({
    type: () => BranchFromDto,
    description:
      'Make the database a branch of another one (docs/api/databases.md#branches): a copy of it now, or at a point of its PITR window. Its config defaults to the source’s.',
  })
  @IsOptional()
  @IsObject({ message: 'from must be an object' })
  @ValidateNested({ message: 'from must be an object' })
  @Type(() => BranchFromDto)
  from?: BranchFromDto;

  @IsExpiresAt(
    'When the database is deleted on its own (docs/api/databases.md#expiry): in the future, at most 365 days ahead (Free: 30); null or left out for never.',
  )
  expires_at?: string | null;
}

/** A new size for some of a server's parts; those left out stay as they are. */
export class DatabaseResizeDto {
  @ApiPropertyOptional({ minimum: 0.25, maximum: 16, description: 'vCPUs (Free: at most 1).' })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.25)
  @Max(16)
  cpu?: number;

  @ApiPropertyOptional({
    minimum: 0.25,
    maximum: 64,
    description: 'GiB of memory (Free: at most 2).',
  })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.25)
  @Max(64)
  memory?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 1024,
    description:
      'GiB of storage (Free: at most 10). Less only while the data fits under 90% of it.',
  })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(1)
  @Max(1024)
  storage?: number;
}

/**
 * PATCH /projects/{id}/databases/{name} (docs/api/databases.md#changing-a-database), at
 * least one field: `config` resizes the server, `expires_at` moves the expiry (null clears
 * it).
 */
export class UpdateDatabaseDto {
  @ApiPropertyOptional({
    type: () => DatabaseResizeDto,
    description:
      'A new size: the database is `resizing` until its server runs with it (one restart).',
  })
  @IsOptional()
  @IsObject({ message: 'config must be an object' })
  @ValidateNested({ message: 'config must be an object' })
  @Type(() => DatabaseResizeDto)
  config?: DatabaseResizeDto;

  @IsExpiresAt(
    'When the database is deleted on its own: in the future, at most 365 days ahead (Free: 30); null for never.',
  )
  expires_at?: string | null;
}

/** Optional body of POST .../backups/{backup_id}/restore. */
export class RestoreBackupDto {
  @ApiPropertyOptional({
    example: 'orders-restored',
    description:
      'Restore into a new database of this name in the same project, leaving the source as it is.',
    pattern: DATABASE_NAME_PATTERN.source,
  })
  @IsOptional()
  @IsDatabaseName()
  @Matches(/^(?!pg_)/, { message: 'name must not start with pg_ (reserved by PostgreSQL)' })
  @IsNotIn(RESERVED_DATABASE_NAMES, { message: 'name is reserved' })
  target_database?: string;
}
