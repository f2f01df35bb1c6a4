import { resolve } from 'node:path';
import { StorageEnv, validateEnv } from '@pgcloud/config';
import { pgBinDir } from '@pgcloud/postgres';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

/** pitr-worker settings (docs/configuration.md#pitr-worker). */
export class PitrWorkerConfig extends StorageEnv {
  /** PostgreSQL's client binaries (pg_receivewal); default: where `pg_config --bindir` says. */
  @IsOptional()
  @IsString()
  PG_BIN_DIR?: string;

  /** The unprivileged OS user pg_receivewal runs as when we run as root. */
  @Matches(/^[a-z_][a-z0-9_-]*$/, { message: 'must be an OS user name' })
  PG_OS_USER: string = 'postgres';

  /** Where local servers and the local S3 keep data; the default spool lives under it. */
  @IsString()
  DATA_DIR: string = '.data';

  /** Where WAL receivers write segments before they are uploaded (default DATA_DIR/pitr). */
  @IsOptional()
  @IsString()
  PITR_SPOOL_DIR?: string;

  /**
   * How often, in seconds, the segment being written is uploaded and the recovery window
   * advanced.
   */
  @IsInt()
  @Min(1)
  @Max(60)
  PITR_FLUSH_INTERVAL_SECONDS: number = 1;

  /**
   * How long a replica's claim on a receiver lasts, in seconds; a dead replica's receivers
   * move after it.
   */
  @IsInt()
  @Min(3)
  @Max(600)
  PITR_LEASE_SECONDS: number = 10;

  /** Receivers one replica runs at most. */
  @IsInt()
  @Min(1)
  @Max(1000)
  PITR_MAX_RECEIVERS: number = 50;

  /** How often the retention sweep runs, in seconds (one replica per round). */
  @IsInt()
  @Min(1)
  @Max(86_400)
  PITR_SWEEP_INTERVAL_SECONDS: number = 60;

  /** How long one day of retention_days lasts, in seconds: 86400; shorten it for trials. */
  @IsInt()
  @Min(1)
  @Max(86_400)
  PITR_RETENTION_DAY_SECONDS: number = 86_400;

  /**
   * How long, in seconds, after a disable PITR cannot be enabled again (409 COOLDOWN_ACTIVE;
   * each enable takes a base backup).
   */
  @IsInt()
  @Min(0)
  @Max(86_400)
  PITR_REENABLE_COOLDOWN_SECONDS: number = 600;

  /** How often, in seconds, the archives are checked in the object store (one replica per round). */
  @IsInt()
  @Min(1)
  @Max(3600)
  PITR_ARCHIVE_CHECK_SECONDS: number = 60;

  /**
   * An archive to which nothing new came for this many seconds while its primary wrote WAL
   * is `stale`.
   */
  @IsInt()
  @Min(1)
  @Max(86_400)
  ARCHIVE_STALE_SECONDS: number = 120;

  get pgBinDir(): string {
    return pgBinDir(this.PG_BIN_DIR);
  }

  get spoolDir(): string {
    return resolve(this.PITR_SPOOL_DIR ?? resolve(this.DATA_DIR, 'pitr'));
  }
}

/** Reads and checks the settings; a bad value stops the service at start. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): PitrWorkerConfig {
  return validateEnv(PitrWorkerConfig, env);
}
