import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsObject,
  IsISO8601,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsDatabaseName } from '../databases/databases.dto.js';

/** The longest a local database may be given to live: 30 days (docs/api/local-daemon.md). */
export const LOCAL_MAX_TTL_SECONDS = 30 * 86_400;

/** How long a local database lives: POST and PATCH /databases of the local daemon. */
export class LocalLifetimeDto {
  /**
   * When the daemon drops it: an ISO 8601 time with its zone, in the future, at most 30
   * days ahead; null for never. Not with ttlSeconds.
   */
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 timestamp, or null' })
  @Matches(/(Z|[+-]\d{2}:\d{2})$/, { message: 'expiresAt must name its time zone' })
  expiresAt?: string | null;

  /** Seconds from now until the daemon drops it, at most 30 days. Not with expiresAt. */
  @IsOptional()
  @IsInt({ message: 'ttlSeconds must be a whole number of seconds' })
  @Min(1)
  @Max(LOCAL_MAX_TTL_SECONDS, { message: 'ttlSeconds must be at most 30 days' })
  ttlSeconds?: number;
}

/**
 * A downloaded backup of a cloud database for the daemon to restore
 * (docs/api/local-daemon.md#pulling-a-cloud-database-down): a file the daemon can read,
 * and the SHA-256 its bytes must have.
 */
export class LocalArchiveDto {
  /** An absolute path on this machine: a `.tar.zst` backup as `backups download` writes it. */
  @IsString()
  @Length(2, 4096, { message: 'fromArchive.path must be 2 to 4096 characters long' })
  @Matches(/^\/[^\0]*$/, { message: 'fromArchive.path must be an absolute path' })
  path: string;

  /** The backup's checksum_sha256: 64 hexadecimal digits. */
  @IsString()
  @Matches(/^[0-9a-f]{64}$/, { message: 'fromArchive.checksumSha256 must be 64 hex digits' })
  checksumSha256: string;
}

/** Body of the local daemon's POST /databases (docs/api/local-daemon.md). */
export class CreateLocalDatabaseDto extends LocalLifetimeDto {
  @IsDatabaseName()
  name: string;

  /**
   * An existing local database to copy. Looked up as given, so a database made outside
   * the daemon under another kind of name can be a template too; at most 63 characters,
   * PostgreSQL's limit, and never NUL, which no name can hold.
   */
  @IsOptional()
  @IsString()
  @Length(1, 63, { message: 'template must be 1 to 63 characters long' })
  @Matches(/^[^\0]*$/, { message: 'template must not hold NUL characters' })
  template?: string;

  /** Dropped when the daemon stops (or at its next start, if it did not stop cleanly). */
  @IsOptional()
  @IsBoolean()
  temporary?: boolean;

  /** A cloud backup to fill the new database from, instead of a template. */
  @IsOptional()
  @IsObject({ message: 'fromArchive must be an object' })
  @ValidateNested({ message: 'fromArchive must be an object' })
  @Type(() => LocalArchiveDto)
  fromArchive?: LocalArchiveDto;
}

/** Body of the local daemon's PATCH /databases/{name}: a new expiry, or expiresAt null. */
export class UpdateLocalDatabaseDto extends LocalLifetimeDto {}

/** Body of the local daemon's POST /databases/{name}/snapshots. */
export class CreateLocalSnapshotDto {
  /** Unique among the database's snapshots; the database name rules. */
  @IsDatabaseName()
  name: string;
}

/** Body of the local daemon's POST /databases/{name}/reset. */
export class ResetLocalDatabaseDto {
  /** The snapshot of the database to bring it back to. */
  @IsString()
  @Length(1, 63, { message: 'snapshot must be 1 to 63 characters long' })
  snapshot: string;
}
