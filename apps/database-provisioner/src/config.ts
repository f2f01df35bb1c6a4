import { resolve } from 'node:path';
import { CommonEnv, validateEnv } from '@pgcloud/config';
import { pgBinDir } from '@pgcloud/postgres';
import {
  IsIn,
  IsInt,
  IsIP,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
} from 'class-validator';

/** database-provisioner settings (see .env.example). */
export class ProvisionerConfig extends CommonEnv {
  /** The platform that runs the servers. */
  @IsIn(['local'])
  DATABASE_DRIVER: string = 'local';

  /** PostgreSQL's server binaries; default: where `pg_config --bindir` says. */
  @IsOptional()
  @IsString()
  PG_BIN_DIR?: string;

  /** The unprivileged OS user that runs PostgreSQL when we run as root. */
  @Matches(/^[a-z_][a-z0-9_-]*$/, { message: 'must be an OS user name' })
  PG_OS_USER: string = 'postgres';

  /** Where local servers, keys and the CA live; PostgreSQL's user must reach it. */
  @IsString()
  DATA_DIR: string = '.data';

  /** The host name or address in connection strings; the servers' certificates name it. */
  @IsString()
  DATABASE_HOST: string = '127.0.0.1';

  /** The one address local servers listen on (0.0.0.0 for every IPv4 interface). */
  @IsIP(undefined, { message: 'must be one IP address, such as 127.0.0.1 or 0.0.0.0' })
  DATABASE_LISTEN_ADDRESS: string = '127.0.0.1';

  /** Ports for local servers, `first-last`. */
  @Matches(/^\d{2,5}-\d{2,5}$/, { message: 'must be first-last, such as 20000-20999' })
  DATABASE_PORT_RANGE: string = '20000-20999';

  /** 32 bytes, base64: seals database passwords at rest (AES-256-GCM). */
  @IsOptional()
  @IsString()
  ENCRYPTION_KEY?: string;

  @IsInt() @Min(1) FREE_MAX_DATABASES_PER_PROJECT: number = 3;
  @IsNumber() @Min(0.25) FREE_MAX_CPU: number = 1;
  @IsNumber() @Min(0.25) FREE_MAX_MEMORY: number = 2;
  @IsNumber() @Min(1) FREE_MAX_STORAGE: number = 10;

  /** How often running databases are checked by connecting, and restarted when down. */
  @IsInt()
  @Min(1)
  @Max(3600)
  RECONCILE_INTERVAL_SECONDS: number = 15;

  /** How long a server without a record stays quarantined before it is deleted (7 days). */
  @IsInt()
  @Min(1)
  QUARANTINE_GRACE_SECONDS: number = 604_800;

  /**
   * Servers without a record one pass may quarantine; more at once is taken for the wrong
   * metadata database (DATABASE_URL), and the pass touches none of them.
   */
  @IsInt()
  @Min(0)
  QUARANTINE_MAX_SERVERS: number = 3;

  /** How long a job's lease lasts: after a crash, its work resumes within this. */
  @IsInt()
  @Min(2)
  @Max(600)
  JOB_LEASE_SECONDS: number = 30;

  get portRange(): { first: number; last: number } {
    const [first, last] = this.DATABASE_PORT_RANGE.split('-').map(Number);
    return { first: first ?? 0, last: last ?? 0 };
  }

  get dataDir(): string {
    return resolve(this.DATA_DIR);
  }

  get pgBinDir(): string {
    return pgBinDir(this.PG_BIN_DIR);
  }
}

/** Reads and checks the settings; a bad value stops the service at start. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): ProvisionerConfig {
  const config = validateEnv(ProvisionerConfig, env);
  const { first, last } = config.portRange;
  if (!(first >= 1024 && first <= last && last <= 65535)) {
    throw new Error(
      `DATABASE_PORT_RANGE=${config.DATABASE_PORT_RANGE}: must be first-last within 1024-65535`,
    );
  }
  return config;
}
