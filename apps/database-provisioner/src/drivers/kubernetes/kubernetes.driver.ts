import type { KubeConfig, V1Secret, V1Service } from '@kubernetes/client-node';
import {
  CLUSTER_KIND,
  CNPG_API_VERSION,
  CNPG_CLUSTER_LABEL,
  HIBERNATION_ANNOTATION,
  SERVER_ID_LABEL,
} from '@pgcloud/kubernetes';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type {
  RestoreOutcome,
  RestoreSpec,
  ServerEndpoint,
  ServerSpec,
  ServerState,
} from '../database-driver.js';
import { DatabaseDriver, REPLICATION_ROLE } from '../database-driver.js';
import { enforceServerLimits } from '../server-limits.js';
import type { ClusterObject } from './cluster-object.js';
import { buildCluster, isHealthy } from './cluster-object.js';
import type { LoadedCa } from './deployment-ca.js';
import { issueCertificate, loadDeploymentCa } from './deployment-ca.js';
import { KubeObjects } from './kube-objects.js';
import {
  caSecret,
  roleSecrets,
  secretValue,
  superuserSecret,
  tlsSecret,
} from './secret-objects.js';
import type { ServerNames } from './server-names.js';
import { clusterName, MANAGED_BY, QUARANTINED_AT_LABEL, serverNames } from './server-names.js';
import type { ServiceType } from './service-object.js';
import { buildService, serviceHostNames } from './service-object.js';
import type { SuperuserLogin } from './superuser-session.js';
import { withTlsSuperuser } from './superuser-session.js';
import { waitUntil } from './wait-until.js';

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
  storageClass?: string;
  /** How long a Cluster may take to become ready (its pods scheduled, its volume bound). */
  readyTimeoutMs: number;
  /** How often the driver looks again while it waits (default 500 ms). */
  pollMs?: number;
}

const SQL_TIMEOUT_MS = 5000;

/**
 * One CloudNativePG Cluster per database, behind a Service that pgcloud owns, with its
 * Secrets, in the namespace of the database's region. Status, reconcile and delete read and
 * write the Kubernetes API, never files. CNPG runs the servers (failover, resize, upgrades);
 * pgcloud's backups, WAL archive and restores reach them through the Service.
 */
export class KubernetesDriver extends DatabaseDriver {
  private readonly objects: KubeObjects;
  private readonly located = new Map<string, string>();
  private preparing?: Promise<LoadedCa>;

  constructor(private readonly settings: KubernetesDriverSettings) {
    super();
    this.objects = new KubeObjects(settings.kubeConfig);
  }

  /** Loads (or makes) the deployment CA and checks that every region's namespace exists. */
  async prepare(): Promise<void> {
    await this.ready();
    for (const namespace of this.namespaceList()) {
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
    const names = serverNames(spec.serverId, namespace);
    const service = await this.objects.createOrGet<V1Service>(
      buildService(names, {
        port: spec.port,
        type: this.settings.serviceType,
        clusterName: clusterName(names, 1),
      }),
    );
    this.located.set(spec.serverId, namespace);
    const endpoint = await this.endpointOf(names, service, signal);
    // A retried create keeps what an earlier attempt made: each object is made once.
    for (const secret of roleSecrets(names, spec)) await this.objects.createOrGet(secret);
    const superuserPassword = randomBytes(24).toString('base64url');
    await this.objects.createOrGet(superuserSecret(names, superuserPassword));
    // The CA's certificate every time (a crash may have come between the two Secrets); the
    // server's certificate once.
    await this.objects.createOrGet(caSecret(names, loaded.ca.pem));
    if (!(await this.objects.get(this.secretRef(names, names.tlsSecret)))) {
      const hosts = serviceHostNames(names, endpoint.host);
      const certificate = await issueCertificate(loaded, names.base, hosts);
      await this.objects.createOrGet(tlsSecret(names, certificate));
    }
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
    await this.waitReady(names, current, endpoint, signal);
    await this.grantAccess(names, endpoint, signal);
    return endpoint;
  }

  async ensureRunning(serverId: string): Promise<ServerEndpoint> {
    const names = await this.namesOf(serverId);
    if (!names) throw new Error(`server ${serverId} does not exist`);
    const service = await this.service(names);
    if (!service || isQuarantined(service)) throw new Error(`server ${serverId} does not exist`);
    const current = selectedCluster(service);
    const cluster = await this.objects.get<ClusterObject>(this.clusterRef(names, current));
    if (!cluster) throw new Error(`server ${serverId} has no Cluster ${current}`);
    if (cluster.metadata?.annotations?.[HIBERNATION_ANNOTATION] === 'on')
      await this.objects.mergePatch(this.clusterRef(names, current), {
        metadata: { annotations: { [HIBERNATION_ANNOTATION]: 'off' } },
      });
    const endpoint = await this.endpointOf(names, service);
    await this.waitReady(names, current, endpoint);
    return endpoint;
  }

  async state(serverId: string): Promise<ServerState> {
    const names = await this.namesOf(serverId);
    const service = names && (await this.service(names));
    // Set aside, as the local driver moves a quarantined server out of its servers.
    if (!names || !service || isQuarantined(service)) return 'missing';
    const current = selectedCluster(service);
    const cluster = await this.objects.get<ClusterObject>(this.clusterRef(names, current));
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

  async destroy(serverId: string): Promise<void> {
    const names = await this.namesOf(serverId);
    if (!names) return;
    // The Clusters first, until their pods have ended: no server outlives its record.
    const clusters = await this.labelled<ClusterObject>(names, CNPG_API_VERSION, CLUSTER_KIND);
    for (const cluster of clusters)
      await this.objects.delete(this.clusterRef(names, cluster.metadata?.name ?? ''), 'Foreground');
    await waitUntil(
      async () =>
        (await this.labelled(names, CNPG_API_VERSION, CLUSTER_KIND)).length === 0
          ? true
          : undefined,
      { ...this.waiting(), what: `the Clusters of ${names.base} gone` },
    );
    // The Service last: it is how the driver finds a server's other objects again.
    await this.deleteLabelled(names, 'v1', 'Secret');
    await this.objects.delete({ apiVersion: 'v1', kind: 'Service', ...this.at(names, names.base) });
    this.located.delete(serverId);
  }

  /** Hibernated (CNPG keeps the volume, stops the pods) and labelled with when. */
  async quarantine(serverId: string): Promise<string> {
    const names = await this.namesOf(serverId);
    if (!names) return `nothing of ${serverId}`;
    const at = String(Math.floor(Date.now() / 1000));
    const label = { metadata: { labels: { [QUARANTINED_AT_LABEL]: at } } };
    for (const cluster of await this.labelled<ClusterObject>(names, CNPG_API_VERSION, CLUSTER_KIND))
      await this.objects.mergePatch(this.clusterRef(names, cluster.metadata?.name ?? ''), {
        metadata: {
          labels: { [QUARANTINED_AT_LABEL]: at },
          annotations: { [HIBERNATION_ANNOTATION]: 'on' },
        },
      });
    await this.objects.mergePatch(
      { apiVersion: 'v1', kind: 'Service', ...this.at(names, names.base) },
      label,
    );
    return `${names.namespace}/${names.base} (hibernated)`;
  }

  async purgeQuarantined(before: Date): Promise<string[]> {
    const purged: string[] = [];
    for (const service of await this.services()) {
      const labels = service.metadata?.labels ?? {};
      const at = Number(labels[QUARANTINED_AT_LABEL]);
      const serverId = labels[SERVER_ID_LABEL];
      if (!serverId || !Number.isFinite(at) || at * 1000 >= before.getTime()) continue;
      await this.destroy(serverId);
      purged.push(serverId);
    }
    return purged;
  }

  async usedBytes(serverId: string): Promise<number> {
    return this.asSuperuser(serverId, async (client) => {
      const { rows } = await client.query<{ bytes: string }>(
        'SELECT sum(pg_database_size(oid))::text AS bytes FROM pg_database',
      );
      return Number(rows[0]?.bytes ?? 0);
    });
  }

  /**
   * Through the Cluster's parameters (CNPG turns ALTER SYSTEM off): CNPG reloads the
   * server, and every new transaction takes the new default. Waits until a new session
   * sees it.
   */
  async setReadOnly(serverId: string, readOnly: boolean): Promise<void> {
    const names = await this.namesOf(serverId);
    const service = names && (await this.service(names));
    if (!names || !service) throw new Error(`server ${serverId} does not exist`);
    const value = readOnly ? 'on' : 'off';
    await this.objects.mergePatch(this.clusterRef(names, selectedCluster(service)), {
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
      { ...this.waiting(), what: `server ${serverId} read-only ${value}` },
    );
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

  async list(): Promise<string[]> {
    const ids = new Set<string>();
    for (const service of await this.services()) {
      const labels = service.metadata?.labels ?? {};
      const serverId = labels[SERVER_ID_LABEL];
      if (serverId && !isQuarantined(service)) ids.add(serverId);
    }
    return [...ids];
  }

  async caCertificate(): Promise<string> {
    return (await this.ready()).ca.pem;
  }

  // Restores on Kubernetes (a Job builds the data beside the live Cluster, a new Cluster is
  // bootstrapped from it and the Service swapped) are not built yet; the driver cannot be
  // selected until they are (config.ts).
  holdForRestore(): Promise<void> {
    return notYet();
  }

  buildRestore(_spec: RestoreSpec): Promise<RestoreOutcome> {
    return notYet();
  }

  swapInRestore(): Promise<ServerEndpoint> {
    return notYet();
  }

  restoreSwapped(): Promise<boolean> {
    return Promise.resolve(false);
  }

  finishRestore(): Promise<void> {
    return notYet();
  }

  abandonRestore(): Promise<void> {
    return notYet();
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

  private namespaceList(): string[] {
    return [...new Set(Object.values(this.settings.namespaces))];
  }

  /** The names of a server's objects, from the namespace its Service is in. */
  private async namesOf(serverId: string): Promise<ServerNames | undefined> {
    const known = this.located.get(serverId);
    if (known) return serverNames(serverId, known);
    for (const namespace of this.namespaceList()) {
      const names = serverNames(serverId, namespace);
      if (await this.service(names)) {
        this.located.set(serverId, namespace);
        return names;
      }
    }
    return undefined;
  }

  private service(names: ServerNames): Promise<V1Service | undefined> {
    return this.objects.get<V1Service>({
      apiVersion: 'v1',
      kind: 'Service',
      ...this.at(names, names.base),
    });
  }

  private async services(): Promise<V1Service[]> {
    const all: V1Service[] = [];
    for (const namespace of this.namespaceList())
      all.push(...(await this.objects.list<V1Service>('v1', 'Service', namespace, MANAGED_BY)));
    return all;
  }

  /**
   * Where clients reach the server: behind a load balancer, the address it was given
   * (waited for); otherwise the Service's name inside the cluster.
   */
  private async endpointOf(
    names: ServerNames,
    service: V1Service,
    signal?: AbortSignal,
  ): Promise<ServerEndpoint> {
    const port = service.spec?.ports?.[0]?.port;
    if (port === undefined) throw new Error(`Service ${names.base} has no port`);
    if (service.spec?.type !== 'LoadBalancer')
      return { host: `${names.base}.${names.namespace}.svc`, port };
    const host = await waitUntil(
      async () => {
        const ingress = (await this.service(names))?.status?.loadBalancer?.ingress?.[0];
        return ingress?.hostname ?? ingress?.ip;
      },
      { ...this.waiting(signal), what: `a load balancer address for ${names.base}` },
    );
    return { host, port };
  }

  /** Until CNPG calls the Cluster healthy and the superuser logs in through the Service. */
  private async waitReady(
    names: ServerNames,
    cluster: string,
    endpoint: ServerEndpoint,
    signal?: AbortSignal,
  ): Promise<void> {
    const what = `Cluster ${names.namespace}/${cluster} ready`;
    await waitUntil(
      async () => {
        const found = await this.objects.get<ClusterObject>(this.clusterRef(names, cluster));
        if (!found) throw new Error('it is gone');
        if (!isHealthy(found)) throw new Error(`phase: ${found.status?.phase ?? 'none yet'}`);
        const login = await this.superuserLoginAt(names, endpoint);
        return withTlsSuperuser(login, SQL_TIMEOUT_MS, async (client) => {
          await client.query('SELECT 1');
          return true;
        });
      },
      { ...this.waiting(signal), what },
    );
  }

  /**
   * The application sees only its own database; the replication role reaches `postgres`,
   * where pitr-worker keeps its slot. Waits for CNPG to have made the managed roles.
   */
  private async grantAccess(
    names: ServerNames,
    endpoint: ServerEndpoint,
    signal?: AbortSignal,
  ): Promise<void> {
    const login = await this.superuserLoginAt(names, endpoint);
    await waitUntil(
      () =>
        withTlsSuperuser(login, SQL_TIMEOUT_MS, async (client) => {
          const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [
            REPLICATION_ROLE,
          ]);
          if (rowCount === 0) return undefined;
          await client.query('REVOKE CONNECT ON DATABASE postgres FROM PUBLIC');
          await client.query('REVOKE CONNECT ON DATABASE template1 FROM PUBLIC');
          await client.query(`GRANT CONNECT ON DATABASE postgres TO ${REPLICATION_ROLE}`);
          return true;
        }),
      { ...this.waiting(signal), what: `the roles of ${names.base}` },
    );
  }

  private async asSuperuser<T>(
    serverId: string,
    work: Parameters<typeof withTlsSuperuser<T>>[2],
  ): Promise<T> {
    const names = await this.namesOf(serverId);
    const service = names && (await this.service(names));
    if (!names || !service) throw new Error(`server ${serverId} does not exist`);
    return withTlsSuperuser(await this.superuserLogin(names, service), SQL_TIMEOUT_MS, work);
  }

  private async superuserLogin(names: ServerNames, service: V1Service): Promise<SuperuserLogin> {
    return this.superuserLoginAt(names, await this.endpointOf(names, service));
  }

  private async superuserLoginAt(
    names: ServerNames,
    endpoint: ServerEndpoint,
  ): Promise<SuperuserLogin> {
    const secret = await this.objects.get<V1Secret>(this.secretRef(names, names.superuserSecret));
    if (!secret) throw new Error(`Secret ${names.superuserSecret} is missing`);
    const { ca } = await this.ready();
    return { endpoint, password: secretValue(secret, 'password'), caPem: ca.pem };
  }

  private async labelled<T extends ClusterObject | V1Secret>(
    names: ServerNames,
    apiVersion: string,
    kind: string,
  ): Promise<T[]> {
    return this.objects.list<T>(apiVersion, kind, names.namespace, names.labels);
  }

  private async deleteLabelled(names: ServerNames, apiVersion: string, kind: string) {
    for (const object of await this.labelled(names, apiVersion, kind))
      await this.objects.delete({
        apiVersion,
        kind,
        ...this.at(names, object.metadata?.name ?? ''),
      });
  }

  private clusterRef(names: ServerNames, cluster: string) {
    return { apiVersion: CNPG_API_VERSION, kind: CLUSTER_KIND, ...this.at(names, cluster) };
  }

  private secretRef(names: ServerNames, name: string) {
    return { apiVersion: 'v1', kind: 'Secret', ...this.at(names, name) };
  }

  private at(names: ServerNames, name: string): { namespace: string; name: string } {
    return { namespace: names.namespace, name };
  }

  private waiting(signal?: AbortSignal) {
    return {
      timeoutMs: this.settings.readyTimeoutMs,
      pollMs: this.settings.pollMs ?? 500,
      ...(signal ? { signal } : {}),
    };
  }
}

/** Whether the server was set aside (quarantine): it counts as gone until purged. */
function isQuarantined(service: V1Service): boolean {
  return service.metadata?.labels?.[QUARANTINED_AT_LABEL] !== undefined;
}

/** The Cluster pgcloud's Service points at: the server's current generation. */
function selectedCluster(service: V1Service): string {
  const cluster = service.spec?.selector?.[CNPG_CLUSTER_LABEL];
  if (!cluster) throw new Error(`Service ${service.metadata?.name} selects no Cluster`);
  return cluster;
}

function notYet(): Promise<never> {
  return Promise.reject(new Error('restores are not built on the kubernetes driver yet'));
}
