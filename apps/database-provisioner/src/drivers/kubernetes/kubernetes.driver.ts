import type { KubeConfig, V1Service } from '@kubernetes/client-node';
import { HIBERNATION_ANNOTATION } from '@pgcloud/kubernetes';
import type { DatabaseConfig } from '@pgcloud/contracts';
import { PermanentJobError } from '@pgcloud/jobs';
import { SUPERUSER, scramSha256Verifier } from '@pgcloud/postgres';
import { rm } from 'node:fs/promises';
import type {
  BranchOutcome,
  DrillOutcome,
  DrillSpec,
  RestoreOutcome,
  RestoreSpec,
  ServerEndpoint,
  ServerSpec,
  ServerState,
} from '../database-driver.js';
import { DatabaseDriver } from '../database-driver.js';
import { createRestorePoint } from '../restore-point.js';
import { alterRolePassword } from '../role-password.js';
import { enforceServerLimits, measureUsedBytes } from '../server-limits.js';
import type { ClusterObject } from './cluster-object.js';
import { buildCluster } from './cluster-object.js';
import { resizeCluster } from './cluster-resize.js';
import type { LoadedCa } from './deployment-ca.js';
import { issueClientCertificateFor, loadDeploymentCa } from './deployment-ca.js';
import { KubeObjects } from './kube-objects.js';
import type { ServerNames } from './server-names.js';
import { clusterName } from './server-names.js';
import type { ServiceType } from './service-object.js';
import { buildService } from './service-object.js';
import type { SuperuserLogin } from './superuser-session.js';
import { SuperuserCertificate, withTlsSuperuser } from './superuser-session.js';
import { clusterRef, isQuarantined, selectedCluster, ServerObjects } from './server-objects.js';
import { waitUntil } from './wait-until.js';
import { ClusterRestores } from './cluster-restore.js';
import { ClusterDrills } from './cluster-drills.js';
import { ensureServerSecrets } from './server-secrets.js';
import { destroyServer, quarantinedBefore, quarantineServer } from './cluster-teardown.js';
import { grantAccess, SQL_TIMEOUT_MS, waitForCluster } from './cluster-readiness.js';

const RESTORE_TIMEOUT_MS = 6 * 3600_000;

/** What the kubernetes driver takes from the app's configuration. */
export interface KubernetesDriverSettings {
  kubeConfig: KubeConfig;
  /** The namespace each region's databases live in (KUBERNETES_NAMESPACES). */
  namespaces: Record<string, string>;
  /** The provisioner's own namespace, where the deployment CA's Secret is. */
  caNamespace: string;
  serviceType: ServiceType;
  /** The PostgreSQL image CNPG runs. */
  imageName: string;
  /** pgcloud's own image, which a restore's Job runs (apps/database-provisioner/src/restore-job). */
  jobImage: string;
  /** How long a restore's build may take: download, replay and the copy (default 6 h). */
  restoreTimeoutMs?: number;
  storageClass?: string;
  /** How long a Cluster may take to become ready (its pods scheduled, its volume bound). */
  readyTimeoutMs: number;
  /** How often the driver looks again while it waits (default 500 ms). */
  pollMs?: number;
}

/**
 * One CloudNativePG Cluster per database, behind a Service that pgcloud owns, with its
 * Secrets, in the namespace of the database's region. Status, reconcile and delete read and
 * write the Kubernetes API, never files. CNPG runs the servers (failover, resize, upgrades);
 * pgcloud's backups, WAL archive and restores reach them through the Service.
 */
export class KubernetesDriver extends DatabaseDriver {
  /** Each Cluster has a volume of its own, of its storage size. */
  readonly sharesDisk = false;

  private readonly objects: KubeObjects;
  private readonly servers: ServerObjects;
  private readonly namespaces: string[];
  private readonly restores: ClusterRestores;
  private readonly drills: ClusterDrills;
  private preparing?: Promise<LoadedCa>;
  private readonly superuserCertificate = new SuperuserCertificate(async () =>
    issueClientCertificateFor(await this.ready(), SUPERUSER),
  );

  constructor(private readonly settings: KubernetesDriverSettings) {
    super();
    this.objects = new KubeObjects(settings.kubeConfig);
    this.namespaces = [...new Set(Object.values(settings.namespaces))];
    this.servers = new ServerObjects(this.objects, this.namespaces, {
      timeoutMs: settings.readyTimeoutMs,
      pollMs: settings.pollMs ?? 500,
    });
    this.restores = new ClusterRestores({
      objects: this.objects,
      servers: this.servers,
      jobImage: settings.jobImage,
      buildTimeoutMs: settings.restoreTimeoutMs ?? RESTORE_TIMEOUT_MS,
      ca: () => this.ready(),
      superuserLogin: (names, service) => this.superuserLogin(names, service),
      ensureRunning: (serverId) => this.ensureRunning(serverId),
    });
    this.drills = new ClusterDrills({
      objects: this.objects,
      servers: this.servers,
      jobImage: settings.jobImage,
      buildTimeoutMs: settings.restoreTimeoutMs ?? RESTORE_TIMEOUT_MS,
      ca: () => this.ready(),
    });
  }

  /** Loads (or makes) the deployment CA and checks that every region's namespace exists. */
  async prepare(): Promise<void> {
    await this.ready();
    for (const namespace of this.namespaces) {
      const found = await this.objects.get({
        apiVersion: 'v1',
        kind: 'Namespace',
        namespace: '',
        name: namespace,
      });
      if (!found) throw new Error(`namespace ${namespace} (KUBERNETES_NAMESPACES) does not exist`);
    }
  }

  async create(spec: ServerSpec, signal?: AbortSignal): Promise<ServerEndpoint> {
    const loaded = await this.ready();
    const namespace = this.settings.namespaces[spec.region];
    if (!namespace) throw new Error(`no namespace is configured for region ${spec.region}`);
    const names = this.servers.place(spec.serverId, namespace);
    const service = await this.objects.createOrGet<V1Service>(
      buildService(names, {
        port: spec.port,
        type: this.settings.serviceType,
        clusterName: clusterName(names, 1),
      }),
    );
    const endpoint = await this.servers.endpointOf(names, service, signal);
    await ensureServerSecrets(this.objects, names, spec, loaded, endpoint.host);
    signal?.throwIfAborted();
    const current = selectedCluster(service);
    await this.objects.createOrGet(
      buildCluster({
        names,
        clusterName: current,
        databaseName: spec.databaseName,
        config: spec.config,
        imageName: this.settings.imageName,
        ...(this.settings.storageClass ? { storageClass: this.settings.storageClass } : {}),
        readOnly: false,
      }),
    );
    const login = await this.superuserLoginAt(names, endpoint);
    await waitForCluster(this.objects, names, current, login, this.servers.waiting(signal));
    await grantAccess(names, login, this.servers.waiting(signal));
    return endpoint;
  }

  /**
   * Not on this driver yet: a copy of a live Cluster needs a Cluster bootstrapped by
   * pg_basebackup from the source's Service, with the branch's names. The branch fails
   * with this reason (docs/api/databases.md#branches).
   */
  branch(): Promise<BranchOutcome> {
    return Promise.reject(
      new PermanentJobError('branches of a live database are not offered on kubernetes yet'),
    );
  }

  async ensureRunning(serverId: string): Promise<ServerEndpoint> {
    const names = await this.servers.namesOf(serverId);
    if (!names) throw new Error(`server ${serverId} does not exist`);
    const service = await this.servers.service(names);
    if (!service || isQuarantined(service)) throw new Error(`server ${serverId} does not exist`);
    const current = selectedCluster(service);
    const cluster = await this.objects.get<ClusterObject>(clusterRef(names, current));
    if (!cluster) throw new Error(`server ${serverId} has no Cluster ${current}`);
    if (cluster.metadata?.annotations?.[HIBERNATION_ANNOTATION] === 'on')
      await this.objects.mergePatch(clusterRef(names, current), {
        metadata: { annotations: { [HIBERNATION_ANNOTATION]: 'off' } },
      });
    const endpoint = await this.servers.endpointOf(names, service);
    const login = await this.superuserLoginAt(names, endpoint);
    await waitForCluster(this.objects, names, current, login, this.servers.waiting());
    return endpoint;
  }

  async state(serverId: string): Promise<ServerState> {
    const names = await this.servers.namesOf(serverId);
    const service = names && (await this.servers.service(names));
    // Set aside, as the local driver moves a quarantined server out of its servers.
    if (!names || !service || isQuarantined(service)) return 'missing';
    const current = selectedCluster(service);
    const cluster = await this.objects.get<ClusterObject>(clusterRef(names, current));
    if (!cluster) return 'missing';
    if (cluster.metadata?.annotations?.[HIBERNATION_ANNOTATION] === 'on') return 'stopped';
    // Whether it answers, by logging in: the status may lag behind a lost server.
    const login = await this.superuserLogin(names, service).catch(() => undefined);
    if (!login) return 'stopped';
    const answered = await withTlsSuperuser(login, 2000, async (client) => {
      await client.query('SELECT 1');
      return true;
    }).catch(() => false);
    return answered ? 'running' : 'stopped';
  }

  destroy(serverId: string): Promise<void> {
    return destroyServer(this.servers, serverId);
  }

  quarantine(serverId: string): Promise<string> {
    return quarantineServer(this.servers, serverId);
  }

  async purgeQuarantined(before: Date): Promise<string[]> {
    const purged: string[] = [];
    for (const serverId of await quarantinedBefore(this.servers, before)) {
      await this.destroy(serverId);
      purged.push(serverId);
    }
    return purged;
  }

  async usedBytes(serverId: string): Promise<number> {
    return this.asSuperuser(serverId, measureUsedBytes);
  }

  /** A live copy is not offered here yet (see branch). */
  readonly branchesLive = false;

  /** A volume is expanded, never shrunk: less storage is refused (STORAGE_IN_USE). */
  readonly shrinksStorage = false;

  async resize(
    serverId: string,
    config: DatabaseConfig,
    options: { unfence: boolean; signal?: AbortSignal },
  ): Promise<void> {
    const { names, service } = await this.servers.existing(serverId);
    const login = await this.superuserLogin(names, service);
    await resizeCluster(this.objects, clusterRef(names, selectedCluster(service)), config, {
      login,
      waiting: this.servers.waiting(options.signal),
    });
    if (options.unfence) await this.unfence(serverId);
  }

  /**
   * Through the Cluster's parameters (CNPG turns ALTER SYSTEM off): CNPG reloads the
   * server, and every new transaction takes the new default. Waits until a new session
   * sees it.
   */
  async setReadOnly(serverId: string, readOnly: boolean): Promise<void> {
    const { names, service } = await this.servers.existing(serverId);
    const value = readOnly ? 'on' : 'off';
    await this.objects.mergePatch(clusterRef(names, selectedCluster(service)), {
      spec: { postgresql: { parameters: { default_transaction_read_only: value } } },
    });
    const login = await this.superuserLogin(names, service);
    await waitUntil(
      () =>
        withTlsSuperuser(login, SQL_TIMEOUT_MS, async (client) => {
          const { rows } = await client.query<{ setting: string }>(
            "SELECT setting FROM pg_settings WHERE name = 'default_transaction_read_only'",
          );
          return rows[0]?.setting === value ? true : undefined;
        }),
      { ...this.servers.waiting(), what: `server ${serverId} read-only ${value}` },
    );
  }

  /**
   * The new verifier goes to the server at once, so the old password is refused from now
   * on, then to the role's Secret (CNPG's managed role keeps to it, in later Clusters too).
   */
  async setLoginPassword(serverId: string, databaseName: string, password: string) {
    const { names, service } = await this.servers.existing(serverId);
    // The server first: should it refuse, the Secret (which CNPG would apply later) keeps
    // the old verifier too.
    const login = await this.superuserLogin(names, service);
    await withTlsSuperuser(login, SQL_TIMEOUT_MS, (client) =>
      alterRolePassword(client, databaseName, password),
    );
    const verifier = scramSha256Verifier(password);
    await this.objects.mergePatch(
      { apiVersion: 'v1', kind: 'Secret', namespace: names.namespace, name: names.appSecret },
      { data: { password: Buffer.from(verifier, 'utf8').toString('base64') } },
    );
  }

  createRestorePoint(serverId: string, name: string): Promise<string> {
    return this.asSuperuser(serverId, (client) => createRestorePoint(client, name));
  }

  /** temp_file_limit is one of the Cluster's parameters; the overrides are reset by SQL. */
  async enforceLimits(
    serverId: string,
    limits: { databaseName: string; storageGib: number; atLimit: boolean },
  ): Promise<string[]> {
    const { databaseName, atLimit } = limits;
    return this.asSuperuser(serverId, (client) =>
      enforceServerLimits(client, { databaseName, atLimit }),
    );
  }

  list(): Promise<string[]> {
    return this.servers.serverIds();
  }

  async caCertificate(): Promise<string> {
    return (await this.ready()).ca.pem;
  }

  /** A standby of nothing (CNPG demotes it): reads go on, no write can be made. */
  holdForRestore(serverId: string): Promise<void> {
    return this.restores.hold(serverId);
  }

  drill(spec: DrillSpec): Promise<DrillOutcome> {
    return this.drills.drill(spec);
  }

  async discardDrill(_drillId: string, serverId: string): Promise<void> {
    // Its Job and Secret hang off the server's names: none left, nothing to find.
    if (!serverId) return;
    await this.drills.discard(await this.drills.namesOf(serverId));
  }

  async buildRestore(spec: RestoreSpec): Promise<RestoreOutcome> {
    // The build's Job and objects hang off the server's: a new database's must be made.
    await spec.serverMade;
    return this.restores.build(spec);
  }

  swapInRestore(serverId: string, restoreId: string): Promise<ServerEndpoint> {
    return this.restores.swapIn(serverId, restoreId);
  }

  restoreSwapped(serverId: string, restoreId: string): Promise<boolean> {
    return this.restores.isSwapped(serverId, restoreId);
  }

  finishRestore(serverId: string): Promise<void> {
    return this.restores.finish(serverId);
  }

  abandonRestore(serverId: string): Promise<void> {
    return this.restores.abandon(serverId);
  }

  /** Never fenced here (sharesDisk is false); a hold ends as a restore that gave up ends. */
  unfence(serverId: string): Promise<void> {
    return this.restores.abandon(serverId);
  }

  /** Removes the CA's private temp dir (the Secret keeps the CA). */
  async close(): Promise<void> {
    const loaded = await this.preparing?.catch(() => undefined);
    if (loaded) await rm(loaded.dir, { recursive: true, force: true });
  }

  private ready(): Promise<LoadedCa> {
    this.preparing ??= loadDeploymentCa(this.objects, this.settings.caNamespace).catch(
      (err: unknown) => {
        this.preparing = undefined;
        throw err;
      },
    );
    return this.preparing;
  }

  private async asSuperuser<T>(
    serverId: string,
    work: Parameters<typeof withTlsSuperuser<T>>[2],
  ): Promise<T> {
    const { names, service } = await this.servers.existing(serverId);
    return withTlsSuperuser(await this.superuserLogin(names, service), SQL_TIMEOUT_MS, work);
  }

  private async superuserLogin(names: ServerNames, service: V1Service): Promise<SuperuserLogin> {
    return this.superuserLoginAt(names, await this.servers.endpointOf(names, service));
  }

  private async superuserLoginAt(
    names: ServerNames,
    endpoint: ServerEndpoint,
  ): Promise<SuperuserLogin> {
    const { ca } = await this.ready();
    return { endpoint, caPem: ca.pem, client: await this.superuserCertificate.get() };
  }
}
