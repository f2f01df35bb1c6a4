import type { CertificateAuthority, OsUser } from '@pgcloud/postgres';
import {
  assertReachable,
  ensureCertificateAuthority,
  ensureOwnedDir,
  resolveOsUser,
  runPgTool,
} from '@pgcloud/postgres';
import { access, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ServerEndpoint, ServerSpec, ServerState } from '../database-driver.js';
import { DatabaseDriver } from '../database-driver.js';
import { portFromConf, SERVER_CONF_FILE } from './cluster-config.js';
import { ensureTemplate } from './cluster-template.js';
import { removeLocksOfZombies } from './postmaster-lock.js';
import { buildServerFiles } from './server-files.js';
import type { DriverPaths, ServerPaths } from './server-paths.js';
import { assertSocketPathFits, driverPaths, serverPaths } from './server-paths.js';
import type { SocketAddress } from './server-sql.js';
import { answers, ensureApplicationRoles, withSuperuser } from './server-sql.js';

/** What the local driver takes from the app's configuration. */
export interface LocalDriverSettings {
  /** PostgreSQL's server binaries (PG_BIN_DIR). */
  pgBinDir: string;
  /** The OS account the servers run as when we are root (PG_OS_USER). */
  osUser: string;
  /** Everything the driver keeps lives under here (DATA_DIR). */
  dataDir: string;
  /** The host name clients use: in endpoints and in the servers' certificates. */
  host: string;
  /** The servers' listen_addresses. */
  listenAddress: string;
}

interface Prepared {
  osUser: OsUser;
  ca: CertificateAuthority;
}

// After a kill -9, the old server's children hold its shared memory for a moment and a
// new postmaster refuses to start until they are gone: retry a few times.
const START_ATTEMPTS = 5;
const START_RETRY_MS = 300;
const PG_CTL_TIMEOUT_SECONDS = '60';
const LOG_LINES_IN_ERRORS = 6;
// The platform's server ids are `srv_` and 20 characters; checked at start against DATA_DIR.
const TYPICAL_SERVER_ID = `srv_${'x'.repeat(20)}`;

/**
 * One PostgreSQL cluster per database on this host: each server is a copy of a template
 * made once by initdb, configured, and started with pg_ctl as the OS user.
 */
const SQL_TIMEOUT_MS = 5000;

export class LocalDriver extends DatabaseDriver {
  private readonly paths: DriverPaths;
  private preparing?: Promise<Prepared>;

  constructor(private readonly settings: LocalDriverSettings) {
    super();
    this.paths = driverPaths(settings.dataDir);
  }

  /**
   * Resolves the OS user, checks that it reaches DATA_DIR, and makes the CA and the
   * template; the app calls it at start so the first create is as fast as the others.
   */
  async prepare(): Promise<void> {
    await this.ready();
  }

  async create(spec: ServerSpec): Promise<ServerEndpoint> {
    const { osUser, ca } = await this.ready();
    assertSocketPathFits(this.settings.dataDir, spec.serverId, spec.port);
    const paths = serverPaths(this.settings.dataDir, spec.serverId);
    if (!(await exists(paths.pgdata))) {
      const { pgBinDir, host, listenAddress } = this.settings;
      const { templateDir } = this.paths;
      const context = { pgBinDir, templateDir, host, listenAddress, osUser, ca };
      await buildServerFiles(spec, paths, context);
    }
    const address = await this.socketAddress(paths);
    if (!(await answers(address))) await this.start(paths, address, osUser);
    await ensureApplicationRoles(address, spec);
    return { host: this.settings.host, port: address.port };
  }

  async ensureRunning(serverId: string): Promise<ServerEndpoint> {
    const { osUser } = await this.ready();
    const paths = serverPaths(this.settings.dataDir, serverId);
    if (!(await exists(paths.pgdata))) throw new Error(`server ${serverId} does not exist`);
    const address = await this.socketAddress(paths);
    if (!(await answers(address))) await this.start(paths, address, osUser);
    return { host: this.settings.host, port: address.port };
  }

  async state(serverId: string): Promise<ServerState> {
    const paths = serverPaths(this.settings.dataDir, serverId);
    if (!(await exists(paths.pgdata))) return 'missing';
    const address = await this.socketAddress(paths).catch(() => undefined);
    return address && (await answers(address)) ? 'running' : 'stopped';
  }

  async usedBytes(serverId: string): Promise<number> {
    const address = await this.socketAddress(serverPaths(this.settings.dataDir, serverId));
    return withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
      const { rows } = await client.query<{ bytes: string }>(
        'SELECT sum(pg_database_size(oid))::text AS bytes FROM pg_database',
      );
      return Number(rows[0]?.bytes ?? 0);
    });
  }

  async setReadOnly(serverId: string, readOnly: boolean): Promise<void> {
    const address = await this.socketAddress(serverPaths(this.settings.dataDir, serverId));
    await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
      // A reload reaches open sessions too: their next transaction takes the new default.
      await client.query(
        `ALTER SYSTEM SET default_transaction_read_only = ${readOnly ? 'on' : 'off'}`,
      );
      await client.query('SELECT pg_reload_conf()');
    });
  }

  async destroy(serverId: string): Promise<void> {
    const paths = serverPaths(this.settings.dataDir, serverId);
    if (await exists(paths.pgdata)) await this.stop(paths);
    await rm(paths.serverDir, { recursive: true, force: true });
  }

  async list(): Promise<string[]> {
    const entries = await readdir(this.paths.serversDir, { withFileTypes: true }).catch(
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return [];
        throw err;
      },
    );
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  }

  async caCertificate(): Promise<string> {
    return (await this.ready()).ca.pem;
  }

  private ready(): Promise<Prepared> {
    // Once per driver; a failure (DATA_DIR out of reach, say) is retried on the next call.
    this.preparing ??= this.makeReady().catch((err: unknown) => {
      this.preparing = undefined;
      throw err;
    });
    return this.preparing;
  }

  private async makeReady(): Promise<Prepared> {
    const { dataDir, pgBinDir } = this.settings;
    const osUser = await resolveOsUser(this.settings.osUser);
    await mkdir(dataDir, { recursive: true });
    await assertReachable(dataDir, osUser, 'DATA_DIR');
    assertSocketPathFits(dataDir, TYPICAL_SERVER_ID, 65535);
    await ensureOwnedDir(this.paths.localDir, osUser);
    await ensureOwnedDir(this.paths.serversDir, osUser);
    const ca = await ensureCertificateAuthority(this.paths.caDir);
    await ensureTemplate(this.paths.templateDir, pgBinDir, osUser);
    return { osUser, ca };
  }

  private async start(paths: ServerPaths, address: SocketAddress, osUser: OsUser): Promise<void> {
    const args = ['-D', paths.pgdata, '-l', paths.logFile, '-w', '-t', PG_CTL_TIMEOUT_SECONDS];
    for (let attempt = 1; ; attempt += 1) {
      try {
        await removeLocksOfZombies(lockFiles(paths, address));
        await runPgTool(this.settings.pgBinDir, 'pg_ctl', [...args, 'start'], { osUser });
        return;
      } catch (err) {
        // Someone else (a concurrent call) may have started it meanwhile.
        if (await answers(address)) return;
        if (attempt >= START_ATTEMPTS) {
          const log = await logTail(paths.logFile);
          throw new Error(`${(err as Error).message}\nserver log:\n${log}`);
        }
        await delay(START_RETRY_MS * attempt);
      }
    }
  }

  private async stop(paths: ServerPaths): Promise<void> {
    const { osUser } = await this.ready();
    const args = ['-D', paths.pgdata, '-m', 'fast', '-w', '-t', PG_CTL_TIMEOUT_SECONDS, 'stop'];
    try {
      // pg_ctl stop would wait its whole timeout for a zombie to remove its pid file.
      await removeLocksOfZombies([join(paths.pgdata, 'postmaster.pid')]);
      await runPgTool(this.settings.pgBinDir, 'pg_ctl', args, { osUser });
    } catch (err) {
      // No postmaster.pid, or a stale one after a kill -9: already stopped, as wanted.
      // A server that still answers, though, must not lose its files under it.
      const address = await this.socketAddress(paths).catch(() => undefined);
      if (address && (await answers(address))) throw err;
    }
  }

  private async socketAddress(paths: ServerPaths): Promise<SocketAddress> {
    const conf = await readFile(join(paths.pgdata, SERVER_CONF_FILE), 'utf8');
    const port = portFromConf(conf);
    if (port === undefined) throw new Error(`no port in ${SERVER_CONF_FILE} of ${paths.pgdata}`);
    return { socketDir: paths.socketDir, port };
  }
}

// The data directory's lock and the socket's: a new postmaster checks both.
function lockFiles(paths: ServerPaths, address: SocketAddress): string[] {
  return [
    join(paths.pgdata, 'postmaster.pid'),
    join(address.socketDir, `.s.PGSQL.${address.port}.lock`),
  ];
}

async function logTail(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '(no log)');
  return text.trim().split('\n').slice(-LOG_LINES_IN_ERRORS).join('\n');
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
