import {
  IsBoolean,
  IsISO8601,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
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
