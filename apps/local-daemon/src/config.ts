import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError, validateEnv } from '@pgcloud/config';
import { pgBinDir } from '@pgcloud/postgres';
import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';

/** local-daemon settings (docs/configuration.md#local-daemon; the API: docs/api/local-daemon.md). */
export class DaemonConfig {
  /** The daemon's HTTP port; it listens on 127.0.0.1 only. */
  @IsInt()
  @Min(1)
  @Max(65535)
  DAEMON_PORT: number = 5480;

  /**
   * The bearer token's file, written on first start (mode 0600); default
   * `$XDG_CONFIG_HOME/pgcloud/daemon.token`.
   */
  @IsOptional()
  @IsString()
  DAEMON_TOKEN_FILE?: string;

  /**
   * An existing PostgreSQL server to manage, instead of the embedded one, as the URL's role
   * (which needs CREATEDB).
   */
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
  DAEMON_DATABASE_URL?: string;

  /**
   * Where the embedded server lives; default `$XDG_DATA_HOME/pgcloud` (`DATA_DIR/daemon`
   * under `npm run up`). PostgreSQL's OS user must reach it.
   */
  @IsOptional()
  @IsString()
  DAEMON_DATA_DIR?: string;

  /** The embedded server's TCP port on 127.0.0.1 (what connection strings name). */
  @IsInt()
  @Min(1024)
  @Max(65535)
  DAEMON_PG_PORT: number = 5481;

  /**
   * How often, in seconds, the daemon drops the databases whose expiry passed
   * (docs/api/local-daemon.md#expiry); at most a minute, so none outlives its time by more.
   */
  @IsInt()
  @Min(1)
  @Max(60)
  DAEMON_EXPIRY_SWEEP_SECONDS: number = 30;

  /** The daemon's own small database on the server: when each database was created. */
  @Length(1, 63)
  @Matches(/^[a-z_][a-z0-9_]*$/, { message: 'must be lowercase letters, digits and underscores' })
  DAEMON_CATALOG_DATABASE: string = 'pgcloud_daemon';

  /** PostgreSQL's server binaries; default: where `pg_config --bindir` says. */
  @IsOptional()
  @IsString()
  PG_BIN_DIR?: string;

  /** The unprivileged OS user that runs the embedded server when we run as root. */
  @Matches(/^[a-z_][a-z0-9_-]*$/, { message: 'must be an OS user name' })
  PG_OS_USER: string = 'postgres';

  /** The XDG base directory of the token file's default; unset or relative: `$HOME/.config`. */
  @IsOptional() @IsString() XDG_CONFIG_HOME?: string;
  /** The XDG base directory of the data's default; unset or relative: `$HOME/.local/share`. */
  @IsOptional() @IsString() XDG_DATA_HOME?: string;
  /** The home directory under which the XDG defaults lie; unset: the OS user's. */
  @IsOptional() @IsString() HOME?: string;

  /** The least severe level logged: it and every level more severe. */
  @IsString()
  @IsIn(['error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL: string = 'log';

  /** `json`: one object per line; `pretty`: text; `auto`: text on a terminal, JSON elsewhere. */
  @IsIn(['auto', 'json', 'pretty'])
  LOG_FORMAT: string = 'auto';

  get tokenFile(): string {
    return resolve(this.DAEMON_TOKEN_FILE ?? join(this.xdgDir('XDG_CONFIG_HOME'), 'daemon.token'));
  }

  get dataDir(): string {
    return resolve(this.DAEMON_DATA_DIR ?? this.xdgDir('XDG_DATA_HOME'));
  }

  get pgBinDir(): string {
    return pgBinDir(this.PG_BIN_DIR);
  }

  /** `$XDG_..._HOME/pgcloud`; a relative XDG value is ignored, as the XDG spec says. */
  private xdgDir(variable: 'XDG_CONFIG_HOME' | 'XDG_DATA_HOME'): string {
    const fallback = variable === 'XDG_CONFIG_HOME' ? '.config' : join('.local', 'share');
    const base = this[variable];
    return join(
      base && isAbsolute(base) ? base : join(this.HOME ?? homedir(), fallback),
      'pgcloud',
    );
  }
}

/** Reads and checks the settings; a bad value stops the daemon at start, naming it. */
export function loadConfig(env: Record<string, string | undefined> = process.env): DaemonConfig {
  const config = validateEnv(DaemonConfig, env);
  const url = config.DAEMON_DATABASE_URL;
  if (url !== undefined && !namesHostAndUser(url)) {
    throw new ConfigError([
      'DAEMON_DATABASE_URL: must name a host and a user, as in postgresql://user:password@127.0.0.1:5432/postgres',
    ]);
  }
  return config;
}

// Connection strings name the server by TCP host and the login role by name: the
// daemon hands both to clients, so neither may be left to libpq's defaults.
function namesHostAndUser(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.hostname.length > 0 && parsed.username.length > 0;
  } catch {
    return false;
  }
}
