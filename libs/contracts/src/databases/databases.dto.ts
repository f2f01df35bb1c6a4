import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
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
  ValidateNested,
} from 'class-validator';

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

/** A server's size: vCPUs, GiB of memory, GiB of storage (docs/api/databases.md). */
export class DatabaseConfigDto {
  @ApiProperty({
    required: false,
    minimum: 0.25,
    maximum: 16,
    default: 1,
    description: 'vCPUs (Free: at most 1).',
  })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.25)
  @Max(16)
  cpu: number = 1;

  @ApiProperty({
    required: false,
    minimum: 0.25,
    maximum: 64,
    default: 1,
    description: 'GiB of memory (Free: at most 2).',
  })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.25)
  @Max(64)
  memory: number = 1;

  @ApiProperty({
    required: false,
    minimum: 1,
    maximum: 1024,
    default: 10,
    description: 'GiB of storage (Free: at most 10).',
  })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(1)
  @Max(1024)
  storage: number = 10;
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
