import type { LocalCluster, OsUser, PgTools, SocketAddress } from '@pgcloud/postgres';
import {
  assertReachable,
  chownFile,
  isCluster,
  startCluster,
  stopCluster,
  withSuperuser,
} from '@pgcloud/postgres';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from '@pgcloud/testing';
import type { AfterBootstrap, HostResolver } from './cnpg-bootstrap.js';
import { bootstrapData } from './cnpg-bootstrap.js';
import type { SecretLookup, StandInCluster } from './cnpg-cluster-fields.js';
import type { ApplicationDatabase } from './cnpg-roles.js';
import { applyManagedRoles, ensureApplicationDatabase } from './cnpg-roles.js';
import type { StandInPaths } from './cnpg-server-files.js';
import {
  configuredPort,
  ensureServerDirs,
  standInPaths,
  writeServerFiles,
} from './cnpg-server-files.js';
import { reloadSettings } from './cnpg-server-reload.js';

/** Where stand-in servers keep their files and how PostgreSQL's binaries are run. */
export interface CnpgServerProcessOptions {
  /** Each Cluster's files go under `<dataRoot>/<namespace>/<name>`; the OS user must reach it. */
  dataRoot: string;
  /** PostgreSQL's server binaries (`pg_config --bindir`). */
  binDir: string;
  /** The account the servers run as (resolveOsUser('postgres') when we are root). */
  osUser: OsUser;
  /**
   * Resolves Service names for a pg_basebackup bootstrap's source (ServiceProxyStandIn.resolve).
   */
  resolveHost?: HostResolver;
}

/** Where a stand-in server is in its life. */
export type CnpgServerProcessState = 'running' | 'hibernated' | 'lost' | 'stopped' | 'destroyed';

const LOSS_TIMEOUT_MS = 10_000;

/**
 * A STAND-IN for one CloudNativePG Cluster's instance, for tests only: a real local
 * PostgreSQL server (as the postgres OS user, through libs/postgres) made and configured
 * from the Cluster's spec, as CNPG's operator and instance manager would. What real CNPG
 * does differently: it runs `spec.instances` pods with streaming replicas and fails over
 * (the stand-in runs ONE primary, whatever `instances` says, and never fails over); a
 * lost pod is recreated by Kubernetes and CNPG (lose() leaves the server down until
 * wake(), which CnpgOperatorStandIn calls a moment later); its defaulting webhook fills in left-out fields and generates the superuser
 * Secret and the certificates (the stand-in refuses such Clusters instead); storage size,
 * storage class, resources and the image are not enforced; its pods listen on 5432 on
 * every address (the stand-in on 127.0.0.1 at a port of its own, reached through
 * ServiceProxyStandIn). A replica cluster (`spec.replica.enabled`) is a standby that replays
 * only the WAL it has, with no primary_conninfo (CNPG would stream from `source`): reads
 * go on, writes are refused; turning it off promotes it, turning it on demotes a running
 * primary (CNPG stops it, rewinds if needed and follows the source).
 */
export class CnpgServerProcess {
  private current: CnpgServerProcessState = 'stopped';
  private queue: Promise<unknown> = Promise.resolve();
  private isStandby = false;
  /** A clone's application database, made once it is a primary. */
  private pendingApp?: ApplicationDatabase;

  private constructor(
    private cluster: StandInCluster,
    private secrets: SecretLookup,
    private readonly paths: StandInPaths,
    readonly port: number,
    private readonly tools: PgTools,
  ) {}

  /**
   * Bootstraps the Cluster's data (once: existing data under `dataRoot` is started as it
   * is), writes its configuration, starts the server, promotes a clone, makes the
   * bootstrap's database and owner and applies the managed roles.
   */
  static async start(
    cluster: StandInCluster,
    secrets: SecretLookup,
    options: CnpgServerProcessOptions,
  ): Promise<CnpgServerProcess> {
    const { dataRoot, binDir, osUser } = options;
    const paths = standInPaths(
      dataRoot,
      cluster.metadata.namespace ?? 'default',
      cluster.metadata.name,
    );
    await mkdir(dataRoot, { recursive: true });
    await assertReachable(dataRoot, osUser, 'the stand-in data root');
    await ensureServerDirs(paths, osUser);
    const tools = { binDir, osUser };
    const port = (await configuredPort(paths)) ?? (await freePort());
    let after: AfterBootstrap | undefined;
    if (!(await isCluster(paths.pgdata)))
      after = await bootstrapData(cluster, secrets, paths, tools, options.resolveHost);
    const server = new CnpgServerProcess(cluster, secrets, paths, port, tools);
    try {
      await server.exclusive(() => server.startUp(after));
    } catch (err) {
      // No server is left running without a handle; data this call made half-way goes, so
      // that a retry bootstraps again rather than starting what the bootstrap left.
      await stopCluster({ pgdata: paths.pgdata, address: server.address }, tools);
      if (after) await rm(paths.pgdata, { recursive: true, force: true });
      throw err;
    }
    return server;
  }

  /** Where it is in its life. */
  get state(): CnpgServerProcessState {
    return this.current;
  }

  /** The server's socket, for the operator's own superuser sessions. */
  get address(): SocketAddress {
    return { socketDir: this.paths.socketDir, port: this.port };
  }

  /** Whether it runs as a standby (a replica cluster's designated primary). */
  get standby(): boolean {
    return this.isStandby;
  }

  /** The data directory (the stand-in for the instance's PVC). */
  get pgdata(): string {
    return this.paths.pgdata;
  }

  /**
   * Applies a changed Cluster: rewrites the certificate, settings and pg_hba.conf, and on
   * a running server reloads them, restarting when a changed parameter needs it
   * (`pending_restart`), demotes or promotes it as `spec.replica.enabled` says, then (as
   * a primary) applies the managed roles. Resolves whether it restarted. A stopped,
   * hibernated or lost server takes the files now, its role and roles when it wakes.
   * As on CNPG, `bootstrap` and `externalClusters` mean nothing after the first start.
   */
  update(cluster: StandInCluster, secrets: SecretLookup): Promise<{ restarted: boolean }> {
    return this.exclusive(async () => {
      this.assertNotDestroyed();
      this.cluster = cluster;
      this.secrets = secrets;
      await writeServerFiles(cluster, secrets, this.paths, this.port, this.tools.osUser);
      if (this.current !== 'running') return { restarted: false };
      const pendingRestart = await reloadSettings(this.address);
      if (pendingRestart.length > 0) {
        await stopCluster({ pgdata: this.paths.pgdata, address: this.address }, this.tools);
        await startCluster(this.localCluster(), this.tools);
      }
      await this.settleRole();
      await this.applyRoles();
      return { restarted: pendingRestart.length > 0 };
    });
  }

  /** Stops the server and keeps its data, as CNPG's `cnpg.io/hibernation: "on"` does. */
  hibernate(): Promise<void> {
    return this.exclusive(async () => {
      this.assertNotDestroyed();
      await stopCluster({ pgdata: this.paths.pgdata, address: this.address }, this.tools);
      this.current = 'hibernated';
    });
  }

  /** Starts a hibernated, stopped or lost server again (for a lost one: its pod came back). */
  wake(): Promise<void> {
    return this.exclusive(async () => {
      this.assertNotDestroyed();
      if (this.current !== 'running') await this.startUp(undefined);
    });
  }

  /**
   * Kills the running postmaster with SIGKILL, like a lost pod, and waits until it has
   * exited. It stays down until wake() (CnpgOperatorStandIn's, as Kubernetes recreates a
   * pod). A server that does not run is left as it is.
   */
  lose(): Promise<void> {
    return this.exclusive(async () => {
      this.assertNotDestroyed();
      if (this.current !== 'running') return;
      await killPostmaster(this.paths.pgdata);
      this.current = 'lost';
    });
  }

  /** Stops the server (fast shutdown: sessions end, data stays). */
  stop(): Promise<void> {
    return this.exclusive(async () => {
      if (this.current === 'destroyed') return;
      await stopCluster({ pgdata: this.paths.pgdata, address: this.address }, this.tools);
      this.current = 'stopped';
    });
  }

  /** Stops the server and removes all its files, as deleting the Cluster (and its PVC) does. */
  async destroy(): Promise<void> {
    await this.stop();
    await this.exclusive(async () => {
      await rm(this.paths.serverDir, { recursive: true, force: true });
      await rm(this.paths.socketDir, { recursive: true, force: true });
      this.current = 'destroyed';
    });
  }

  private async startUp(after: AfterBootstrap | undefined): Promise<void> {
    await writeServerFiles(this.cluster, this.secrets, this.paths, this.port, this.tools.osUser);
    await startCluster(this.localCluster(), this.tools);
    this.current = 'running';
    if (after?.app) this.pendingApp = after.app;
    await this.settleRole();
    await this.applyRoles();
  }

  /**
   * Makes the running server what `spec.replica.enabled` asks: a standby (a primary is
   * stopped, gets standby.signal and starts again) or a primary (a standby, a fresh clone
   * too, is promoted onto a new timeline).
   */
  private async settleRole(): Promise<void> {
    const replica = this.cluster.spec.replica;
    const wanted = replica?.enabled === true;
    if (wanted && !this.cluster.spec.externalClusters?.some((e) => e.name === replica?.source))
      throw new Error(`spec.replica.source names no externalClusters entry: '${replica?.source}'`);
    this.isStandby = await this.inRecovery();
    if (this.isStandby && !wanted) await this.promote();
    if (!this.isStandby && wanted) {
      await stopCluster({ pgdata: this.paths.pgdata, address: this.address }, this.tools);
      const signal = join(this.paths.pgdata, 'standby.signal');
      await writeFile(signal, '');
      await chownFile(signal, this.tools.osUser, 0o600);
      await startCluster(this.localCluster(), this.tools);
    }
    this.isStandby = wanted;
  }

  /** As a primary: the clone's application database, then the managed roles. */
  private async applyRoles(): Promise<void> {
    if (this.isStandby) return;
    if (this.pendingApp) await ensureApplicationDatabase(this.address, this.pendingApp);
    this.pendingApp = undefined;
    await applyManagedRoles(this.address, this.cluster, this.secrets);
  }

  private inRecovery(): Promise<boolean> {
    return withSuperuser(this.address, 5000, async (client) => {
      const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
      return rows[0]?.r === true;
    });
  }

  private async promote(): Promise<void> {
    const promoted = await withSuperuser(this.address, 5000, async (client) => {
      const { rows } = await client.query<{ p: boolean }>('SELECT pg_promote(true, 60) AS p');
      return rows[0]?.p === true;
    });
    if (!promoted) throw new Error(`${this.cluster.metadata.name} was not promoted within 60 s`);
  }

  private localCluster(): LocalCluster {
    return { pgdata: this.paths.pgdata, logFile: this.paths.logFile, address: this.address };
  }

  private assertNotDestroyed(): void {
    if (this.current === 'destroyed') throw new Error(`${this.cluster.metadata.name} is destroyed`);
  }

  // One change at a time: an update must not race a hibernation or a loss.
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

/**
 * SIGKILLs the postmaster named by `pgdata`'s postmaster.pid (when that pid is a postgres
 * process: never another that reused it) and waits until it has exited, so that its
 * listening sockets are closed, not merely silent.
 */
async function killPostmaster(pgdata: string): Promise<void> {
  const pidFile = await readFile(join(pgdata, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(pidFile.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  const command = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
  if (command.trim() !== 'postgres') return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
  const deadline = Date.now() + LOSS_TIMEOUT_MS;
  while (!(await hasExited(pid))) {
    if (Date.now() > deadline) throw new Error(`the killed postmaster ${pid} still runs`);
    await delay(20);
  }
}

/** True when `pid` is gone or a zombie (exited, not yet reaped). */
async function hasExited(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // The state follows the command name, which is in parentheses.
  const end = stat.lastIndexOf(')');
  return stat === '' || stat.slice(end + 2, end + 3) === 'Z';
}
