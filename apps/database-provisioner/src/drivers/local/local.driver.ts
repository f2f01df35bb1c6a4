import { Logger } from '@nestjs/common';
import type { DatabaseConfig } from '@pgcloud/contracts';
import type { CertificateAuthority, OsUser, PgTools, SocketAddress } from '@pgcloud/postgres';
import {
  answers,
  assertReachable,
  ensureCertificateAuthority,
  ensureCluster,
  ensureOwnedDir,
  resolveOsUser,
  SERVER_CONF_FILE,
  startCluster,
  stopCluster,
  withSuperuser,
} from '@pgcloud/postgres';
import { mkdir, readFile, rm, statfs } from 'node:fs/promises';
import { exists, subdirectories } from './local-files.js';
import { join } from 'node:path';
import type {
  BranchOutcome,
  BranchSource,
  DrillOutcome,
  DrillSpec,
  RestoreOutcome,
  RestoreSpec,
  ServerEndpoint,
  ServerSpec,
  ServerState,
} from '../database-driver.js';
import { DatabaseDriver } from '../database-driver.js';
import { tempFileLimitKb } from '../server-size.js';
import { portFromConf } from './cluster-config.js';
import { purgeSetAside, setAside } from './quarantine.js';
import { inRecovery, isMarkedHeld, markHeld, promoteHeld, unmarkHeld } from './restore-hold.js';
import { createRestorePoint } from '../restore-point.js';
import { enforceServerLimits, measureUsedBytes } from '../server-limits.js';
import type { DataFill } from './server-files.js';
import { buildServerFiles, rewriteServerConf } from './server-files.js';
import { adoptBranchRoles, branchFill, branchPoint } from './local-branch.js';
import type { DriverPaths, ServerPaths } from './server-paths.js';
import { assertSocketPathFits, driverPaths, serverPaths } from './server-paths.js';
import { discardLocalDrill, runLocalDrill } from './local-drill.js';
import { ensureApplicationRoles, setRolePassword } from './server-sql.js';
import {
  buildRestore,
  discardRestoreBuild,
  finishRestore,
  isSwapped,
  removeOldData,
  swapRestored,
  undoRestore,
} from './local-restore.js';

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

// The platform's server ids are `srv_` and 20 characters; checked at start against DATA_DIR.
const TYPICAL_SERVER_ID = `srv_${'x'.repeat(20)}`;
const SQL_TIMEOUT_MS = 5000;

/**
 * One PostgreSQL cluster per database on this host: each server is a copy of a template
 * made once by initdb, configured, and started with pg_ctl as the OS user.
 */
export class LocalDriver extends DatabaseDriver {
  private readonly logger = new Logger(LocalDriver.name);
  private readonly paths: DriverPaths;
  private preparing?: Promise<Prepared>;
  /** Every server keeps its data under DATA_DIR, on one disk. */
  readonly sharesDisk = true;

  override async diskSpace(): Promise<{ freeBytes: number; totalBytes: number }> {
    const stats = await statfs(this.paths.localDir);
    return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
  }

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

  async create(spec: ServerSpec, signal?: AbortSignal): Promise<ServerEndpoint> {
    const address = await this.makeServer(spec, signal);
    signal?.throwIfAborted();
    await ensureApplicationRoles(address, spec);
    return { host: this.settings.host, port: address.port };
  }

  async branch(
    spec: ServerSpec,
    source: BranchSource,
    signal?: AbortSignal,
  ): Promise<BranchOutcome> {
    const sourcePaths = serverPaths(this.settings.dataDir, source.serverId);
    const address = await this.makeServer(spec, signal, async (paths, context) =>
      branchFill(await this.socketAddress(sourcePaths), signal)(paths, context),
    );
    await adoptBranchRoles(address, source.databaseName, spec);
    return {
      endpoint: { host: this.settings.host, port: address.port },
      ...(await branchPoint(serverPaths(this.settings.dataDir, spec.serverId))),
    };
  }

  /**
   * Builds a server's files once (a copy of the template, or what `fill` puts there) and
   * starts it; a second call finds them and only starts it if it is down.
   */
  private async makeServer(
    spec: ServerSpec,
    signal?: AbortSignal,
    fill?: DataFill,
  ): Promise<SocketAddress> {
    const { osUser, ca } = await this.ready();
    signal?.throwIfAborted();
    assertSocketPathFits(this.settings.dataDir, spec.serverId, spec.port);
    const paths = serverPaths(this.settings.dataDir, spec.serverId);
    if (!(await exists(paths.pgdata))) {
      const { pgBinDir, host, listenAddress } = this.settings;
      const { templateDir } = this.paths;
      const context = { pgBinDir, templateDir, host, listenAddress, osUser, ca };
      await buildServerFiles(spec, paths, context, fill);
    }
    signal?.throwIfAborted();
    const address = await this.socketAddress(paths);
    if (!(await answers(address))) await this.start(paths, address, osUser, signal);
    return address;
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

  readonly branchesLive = true;

  /** The servers share DATA_DIR: less storage is a smaller limit, kept while the data fits. */
  readonly shrinksStorage = true;

  /**
   * The settings file written for the new size, then one restart (shared_buffers and the
   * worker counts take effect only then): clients see their sessions dropped once.
   */
  async resize(
    serverId: string,
    config: DatabaseConfig,
    options: { unfence: boolean; signal?: AbortSignal },
  ): Promise<void> {
    const { osUser } = await this.ready();
    const paths = serverPaths(this.settings.dataDir, serverId);
    if (!(await exists(paths.pgdata))) throw new Error(`server ${serverId} does not exist`);
    const address = await this.socketAddress(paths);
    const { listenAddress } = this.settings;
    await rewriteServerConf({ port: address.port, config }, paths, { listenAddress, osUser });
    options.signal?.throwIfAborted();
    if (await answers(address)) await this.stop(paths);
    if (options.unfence) await unmarkHeld(paths.pgdata);
    await this.start(paths, address, osUser, options.signal);
  }

  async usedBytes(serverId: string): Promise<number> {
    const address = await this.socketAddress(serverPaths(this.settings.dataDir, serverId));
    return withSuperuser(address, SQL_TIMEOUT_MS, measureUsedBytes);
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

  async setLoginPassword(serverId: string, databaseName: string, password: string) {
    const address = await this.socketAddress(serverPaths(this.settings.dataDir, serverId));
    await setRolePassword(address, databaseName, password);
  }

  async createRestorePoint(serverId: string, name: string): Promise<string> {
    const address = await this.socketAddress(serverPaths(this.settings.dataDir, serverId));
    return withSuperuser(address, SQL_TIMEOUT_MS, (client) => createRestorePoint(client, name));
  }

  async enforceLimits(
    serverId: string,
    limits: { databaseName: string; storageGib: number; atLimit: boolean },
  ): Promise<string[]> {
    const address = await this.socketAddress(serverPaths(this.settings.dataDir, serverId));
    const { databaseName, storageGib, atLimit } = limits;
    return withSuperuser(address, SQL_TIMEOUT_MS, (client) =>
      enforceServerLimits(client, {
        databaseName,
        tempFileLimitKb: tempFileLimitKb(storageGib),
        atLimit,
      }),
    );
  }

  async destroy(serverId: string): Promise<void> {
    const paths = await this.stopAll(serverId);
    await rm(paths.serverDir, { recursive: true, force: true });
  }

  async quarantine(serverId: string): Promise<string> {
    const paths = await this.stopAll(serverId);
    return setAside(this.paths.quarantineDir, paths.serverDir, serverId);
  }

  purgeQuarantined(before: Date): Promise<string[]> {
    return purgeSetAside(this.paths.quarantineDir, before.getTime());
  }

  /** Stops a server, and the checking server a restore may run beside its live data. */
  private async stopAll(serverId: string): Promise<ServerPaths> {
    const paths = serverPaths(this.settings.dataDir, serverId);
    if (await exists(paths.serverDir))
      await discardRestoreBuild(paths, this.tools((await this.ready()).osUser));
    if (await exists(paths.pgdata)) await this.stop(paths);
    return paths;
  }

  async holdForRestore(serverId: string): Promise<void> {
    const { osUser } = await this.ready();
    const paths = serverPaths(this.settings.dataDir, serverId);
    const address = await this.socketAddress(paths);
    const running = await answers(address);
    if (running && (await isMarkedHeld(paths.pgdata)) && (await inRecovery(address))) return;
    await markHeld(paths.pgdata, osUser);
    if (running) await this.stop(paths);
    await this.start(paths, address, osUser);
  }

  async buildRestore(spec: RestoreSpec): Promise<RestoreOutcome> {
    const { osUser, ca } = await this.ready();
    const { host, listenAddress } = this.settings;
    const paths = serverPaths(this.settings.dataDir, spec.serverId);
    return buildRestore(paths, spec, {
      tools: { ...this.tools(osUser), ...(spec.signal ? { signal: spec.signal } : {}) },
      host,
      listenAddress,
      caPem: ca.pem,
    });
  }

  async swapInRestore(serverId: string, restoreId: string): Promise<ServerEndpoint> {
    const paths = serverPaths(this.settings.dataDir, serverId);
    if (!(await swapRestored(paths, restoreId, () => this.stop(paths))))
      throw new Error(`server ${serverId} has no checked restore to swap in`);
    return this.ensureRunning(serverId);
  }

  restoreSwapped(serverId: string, restoreId: string): Promise<boolean> {
    return isSwapped(serverPaths(this.settings.dataDir, serverId), restoreId);
  }

  async finishRestore(serverId: string): Promise<void> {
    const { osUser } = await this.ready();
    const paths = serverPaths(this.settings.dataDir, serverId);
    const { removed } = await finishRestore(paths, this.tools(osUser));
    // The old data's files go meanwhile: the restore is complete without waiting for them.
    removed.catch((err: unknown) =>
      this.logger.warn(`the old data of ${serverId} is not removed yet: ${String(err)}`),
    );
    // Restored data is on a timeline of its own already: promotion opens it, dropping nobody.
    const address = await this.socketAddress(paths);
    if ((await answers(address)) && (await inRecovery(address)))
      await promoteHeld(paths.pgdata, this.tools(osUser));
    await unmarkHeld(paths.pgdata);
    await this.ensureRunning(serverId);
  }

  async abandonRestore(serverId: string): Promise<void> {
    const { osUser } = await this.ready();
    const paths = serverPaths(this.settings.dataDir, serverId);
    await undoRestore(paths, this.tools(osUser), () => this.stop(paths));
    // The old data goes on where it stopped, on its own timeline (its WAL archive with it):
    // a restart off hold, not a promotion.
    await this.unfence(serverId);
  }

  async unfence(serverId: string): Promise<void> {
    const paths = serverPaths(this.settings.dataDir, serverId);
    if (await isMarkedHeld(paths.pgdata)) {
      await this.stop(paths);
      await unmarkHeld(paths.pgdata);
    }
    await this.ensureRunning(serverId);
  }

  async list(): Promise<string[]> {
    return subdirectories(this.paths.serversDir);
  }

  async drill(spec: DrillSpec): Promise<DrillOutcome> {
    const { osUser, ca } = await this.ready();
    return runLocalDrill(this.settings.dataDir, spec, this.tools(osUser), ca);
  }

  async discardDrill(drillId: string): Promise<void> {
    const { osUser } = await this.ready();
    await discardLocalDrill(this.settings.dataDir, drillId, this.tools(osUser));
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
    // Old data a restart cut short the removal of, after its restore had completed.
    for (const serverId of await this.list())
      await removeOldData(serverPaths(this.settings.dataDir, serverId));
    const ca = await ensureCertificateAuthority(this.paths.caDir);
    await ensureCluster(this.paths.templateDir, { binDir: pgBinDir, osUser });
    return { osUser, ca };
  }

  private async start(
    paths: ServerPaths,
    address: SocketAddress,
    osUser: OsUser,
    signal?: AbortSignal,
  ): Promise<void> {
    await startCluster(
      { pgdata: paths.pgdata, logFile: paths.logFile, address },
      { ...this.tools(osUser), signal },
    );
  }

  private async stop(paths: ServerPaths): Promise<void> {
    const { osUser } = await this.ready();
    const address = await this.socketAddress(paths).catch(() => undefined);
    await stopCluster({ pgdata: paths.pgdata, address }, this.tools(osUser));
  }

  private tools(osUser: OsUser): PgTools {
    return { binDir: this.settings.pgBinDir, osUser };
  }

  private async socketAddress(paths: ServerPaths): Promise<SocketAddress> {
    const conf = await readFile(join(paths.pgdata, SERVER_CONF_FILE), 'utf8');
    const port = portFromConf(conf);
    if (port === undefined) throw new Error(`no port in ${SERVER_CONF_FILE} of ${paths.pgdata}`);
    return { socketDir: paths.socketDir, port };
  }
}
