import { StorageEnv, validateEnv } from '@pgcloud/config';
import type { TierLimits } from '@pgcloud/messaging';
import { pgBinDir } from '@pgcloud/postgres';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { availableParallelism } from 'node:os';

const DAY_SECONDS = 86_400;

/** backup-service settings (docs/configuration.md#backup-service). */
export class BackupServiceConfig extends StorageEnv {
  /** PostgreSQL's client binaries (pg_basebackup); default: where `pg_config --bindir` says. */
  @IsOptional()
  @IsString()
  PG_BIN_DIR?: string;

  /** How long a download link works, in seconds (docs/api/backups.md: 15 minutes). */
  @IsInt()
  @Min(1)
  @Max(7 * DAY_SECONDS)
  DOWNLOAD_URL_TTL_SECONDS: number = 900;

  /** Automated backups: one per running database per this period, in seconds (daily). */
  @IsInt()
  @Min(5)
  BACKUP_SCHEDULE_INTERVAL_SECONDS: number = DAY_SECONDS;

  /** How often, in seconds, a replica looks for databases due a backup and expired backups. */
  @IsInt()
  @Min(1)
  @Max(3600)
  BACKUP_CHECK_INTERVAL_SECONDS: number = 60;

  /** How long automated backups are kept on the Free tier, in seconds (7 days). */
  @IsInt()
  @Min(1)
  BACKUP_RETENTION_FREE_SECONDS: number = 7 * DAY_SECONDS;

  /** How long automated backups are kept on the Pro tier, in seconds (30 days). */
  @IsInt()
  @Min(1)
  BACKUP_RETENTION_PRO_SECONDS: number = 30 * DAY_SECONDS;

  /** Backups one replica streams at once. */
  @IsInt()
  @Min(1)
  @Max(32)
  BACKUP_CONCURRENCY: number = 2;

  /**
   * zstd threads compressing each backup in pg_basebackup; 0, the default, takes as many
   * as this process has cores (a pod's limit may be fewer: then set it).
   */
  @IsInt()
  @Min(0)
  @Max(64)
  BACKUP_COMPRESSION_THREADS: number = 0;

  /**
   * Manual backups a database keeps on the Free tier (docs/api/backups.md): pending, running
   * and completed ones count, failed ones do not; one more answers 403 QUOTA_EXCEEDED.
   */
  @IsInt()
  @Min(1)
  MANUAL_BACKUP_LIMIT_FREE: number = 10;

  /** Manual backups a database keeps on the Pro tier, counted as on the Free tier. */
  @IsInt()
  @Min(1)
  MANUAL_BACKUP_LIMIT_PRO: number = 100;

  /**
   * How long a job's lease lasts, in seconds, renewed every third of it: a worker that cannot
   * renew stops the job's step before it lapses; after a crash, its work resumes within this.
   */
  @IsInt()
  @Min(2)
  @Max(600)
  JOB_LEASE_SECONDS: number = 30;

  get manualBackupLimits(): TierLimits {
    return { free: this.MANUAL_BACKUP_LIMIT_FREE, pro: this.MANUAL_BACKUP_LIMIT_PRO };
  }

  get compressionThreads(): number {
    return this.BACKUP_COMPRESSION_THREADS || availableParallelism();
  }

  get pgBinDir(): string {
    return pgBinDir(this.PG_BIN_DIR);
  }
}

/** Reads and checks the settings; a bad value stops the service at start. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): BackupServiceConfig {
  return validateEnv(BackupServiceConfig, env);
}
