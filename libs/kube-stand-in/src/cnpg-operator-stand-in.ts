import type { OsUser } from '@pgcloud/postgres';
import { PollLoop } from './poll-loop.js';
import type { SecretLookup, StandInCluster, StandInSecret } from './cnpg-cluster-fields.js';
import { CnpgServerProcess } from './cnpg-server.js';
import type { JobPodEndpoint } from './kubelet-stand-in.js';
import type { ServiceEndpointCandidate, StandInService } from './service-proxy-stand-in.js';
import { ServiceProxyStandIn } from './service-proxy-stand-in.js';
import type { ApiObject } from './stand-in-api.js';
import { StandInApi } from './stand-in-api.js';

/** How the operator stand-in reaches the Kubernetes API and where its servers live. */
export interface CnpgOperatorStandInOptions {
  /** The API's base URL and bearer token (ApiServerStandIn's url and token). */
  apiUrl: string;
  token: string;
  dataRoot: string;
  binDir: string;
  osUser: OsUser;
  /** How often it looks at the API (default 100 ms). */
  pollMs?: number;
  /** How long a lost instance stays down before it is started again (default 1 s). */
  restartLostAfterMs?: number;
  /** Pods others run (the Job runner's), which Services reach as they reach the instances. */
  otherPods?: () => readonly JobPodEndpoint[];
}

interface Instance {
  server?: CnpgServerProcess;
  generation?: number;
  /** The last failure to start or update, shown in the Cluster's status. */
  error?: string;
  lostSince?: number;
  status?: string;
}

const CLUSTERS = '/apis/postgresql.cnpg.io/v1';
const HEALTHY = 'Cluster in healthy state';
/**
 * Held on every Cluster the stand-in runs, so a deleted Cluster stays (deletionTimestamp
 * set) until its server is gone, as a Cluster deleted in the foreground stays until its
 * pods have ended.
 */
const INSTANCE_FINALIZER = 'stand-in.pgcloud.dev/instance';

/**
 * A STAND-IN for the CloudNativePG operator, for tests only: it reads Clusters from the
 * Kubernetes API as CNPG's controller would and runs one real local PostgreSQL server
 * per Cluster (CnpgServerProcess: see there what real CNPG does differently), keeps the
 * primary's Pod and the Cluster's status, applies changed specs and the hibernation
 * annotation, starts a lost instance again after a moment (as Kubernetes recreates a pod),
 * and removes a deleted Cluster's server and data before the Cluster goes (a finalizer). It also stands in for kube-proxy and a
 * load balancer (ServiceProxyStandIn): every Service reaches the pods its selector matches, and
 * a LoadBalancer Service gets 127.0.0.1 as its address; the pods of `otherPods` (the Job
 * runner's) are endpoints too. `spec.replica.enabled` keeps or makes the instance a
 * standby (CnpgServerProcess); a healthy replica cluster shows the same status as a primary. It polls rather than watches:
 * simpler, and the driver under test cannot tell.
 */
export class CnpgOperatorStandIn {
  private readonly instances = new Map<string, Instance>();
  private readonly proxies = new ServiceProxyStandIn();
  private loop?: PollLoop;
  private readonly api: StandInApi;

  private constructor(private readonly options: CnpgOperatorStandInOptions) {
    this.api = new StandInApi(options.apiUrl, options.token);
  }

  static start(options: CnpgOperatorStandInOptions): CnpgOperatorStandIn {
    const standIn = new CnpgOperatorStandIn(options);
    standIn.loop = new PollLoop('CNPG stand-in', () => standIn.reconcile(), options.pollMs);
    return standIn;
  }

  /** Kills the server of a Cluster's primary, as a lost node would (it comes back later). */
  async lose(namespace: string, cluster: string): Promise<void> {
    const instance = this.instances.get(`${namespace}/${cluster}`);
    if (!instance?.server) throw new Error(`no server runs for Cluster ${namespace}/${cluster}`);
    await instance.server.lose();
  }

  /**
   * The address a Service's cluster DNS name (`<svc>.<ns>.svc`) reaches here: the
   * Service's listener (ServiceProxyStandIn.resolve); undefined for any other name.
   */
  resolveHost(host: string): string | undefined {
    return this.proxies.resolve(host);
  }

  /** Stops looking, every proxy and every server (their data stays under dataRoot). */
  async stop(): Promise<void> {
    await this.loop?.stop();
    await this.proxies.stopAll();
    for (const instance of this.instances.values()) await instance.server?.stop();
  }

  private async reconcile(): Promise<void> {
    const clusters = await this.api.list(`${CLUSTERS}/clusters`);
    const seen = new Set<string>();
    for (const cluster of clusters) {
      const key = `${cluster.metadata.namespace}/${cluster.metadata.name}`;
      seen.add(key);
      await this.reconcileCluster(key, cluster);
    }
    for (const [key, instance] of this.instances) {
      if (seen.has(key)) continue;
      this.instances.delete(key);
      await instance.server?.destroy();
    }
    await this.reconcileServices();
  }

  private async reconcileCluster(key: string, cluster: ApiObject): Promise<void> {
    const finalizers = cluster.metadata.finalizers ?? [];
    if (cluster.metadata.deletionTimestamp) {
      // Its pods end before the Cluster goes (what foreground deletion waits for).
      await this.instances.get(key)?.server?.destroy();
      this.instances.delete(key);
      const rest = finalizers.filter((name) => name !== INSTANCE_FINALIZER);
      await this.api.request('PATCH', this.clusterPath(cluster), {
        metadata: { finalizers: rest },
      });
      return;
    }
    if (!finalizers.includes(INSTANCE_FINALIZER))
      await this.api.request('PATCH', this.clusterPath(cluster), {
        metadata: { finalizers: [...finalizers, INSTANCE_FINALIZER] },
      });
    const instance = this.instances.get(key) ?? {};
    this.instances.set(key, instance);
    const namespace = cluster.metadata.namespace ?? 'default';
    const asCluster = cluster as unknown as StandInCluster;
    try {
      if (!instance.server) {
        const secrets = await this.secrets(namespace);
        instance.server = await CnpgServerProcess.start(asCluster, secrets, {
          ...this.options,
          resolveHost: (host) => this.resolveHost(host),
        });
        instance.generation = cluster.metadata.generation;
        instance.error = undefined;
      } else if (instance.generation !== cluster.metadata.generation) {
        await instance.server.update(asCluster, await this.secrets(namespace));
        instance.generation = cluster.metadata.generation;
        instance.error = undefined;
      }
      await this.keepUp(instance, cluster);
    } catch (err) {
      instance.error = err instanceof Error ? err.message : String(err);
    }
    await this.writePod(cluster, instance);
    await this.writeStatus(cluster, instance);
  }

  /** Hibernation on and off, and a lost instance started again after a while. */
  private async keepUp(instance: Instance, cluster: ApiObject): Promise<void> {
    const server = instance.server;
    if (!server) return;
    const hibernate = cluster.metadata.annotations?.['cnpg.io/hibernation'] === 'on';
    if (hibernate && server.state !== 'hibernated') await server.hibernate();
    if (!hibernate && server.state === 'hibernated') await server.wake();
    if (server.state !== 'lost') {
      instance.lostSince = undefined;
      return;
    }
    instance.lostSince ??= Date.now();
    if (Date.now() - instance.lostSince >= (this.options.restartLostAfterMs ?? 1000))
      await server.wake();
  }

  private phaseOf(instance: Instance): { phase: string; ready: boolean } {
    const state = instance.server?.state;
    if (state === 'running') return { phase: HEALTHY, ready: true };
    if (state === 'hibernated') return { phase: 'Cluster in hibernation', ready: false };
    if (state === 'lost') return { phase: 'Failing over', ready: false };
    return { phase: 'Setting up primary', ready: false };
  }

  private async writeStatus(cluster: ApiObject, instance: Instance): Promise<void> {
    const { phase, ready } = this.phaseOf(instance);
    const name = cluster.metadata.name;
    const status = {
      phase,
      instances: 1,
      readyInstances: ready ? 1 : 0,
      currentPrimary: `${name}-1`,
      writeService: `${name}-rw`,
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'ClusterIsReady' : 'ClusterIsNotReady',
          message: instance.error ?? phase,
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    };
    const said = JSON.stringify({
      ...status,
      conditions: [{ ...status.conditions[0], lastTransitionTime: '' }],
    });
    if (instance.status === said) return;
    await this.api.request('PATCH', `${this.clusterPath(cluster)}/status`, { status });
    instance.status = said;
  }

  /** The primary's Pod, owned by its Cluster, Running while its server answers. */
  private async writePod(cluster: ApiObject, instance: Instance): Promise<void> {
    const namespace = cluster.metadata.namespace ?? 'default';
    const name = `${cluster.metadata.name}-1`;
    const path = `/api/v1/namespaces/${namespace}/pods`;
    const phase = instance.server?.state === 'running' ? 'Running' : 'Pending';
    const existing = await this.api.request('GET', `${path}/${name}`, undefined, [404]);
    if (!existing && instance.server) {
      await this.api.request('POST', path, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace,
          labels: {
            'cnpg.io/cluster': cluster.metadata.name,
            'cnpg.io/instanceRole': 'primary',
            role: 'primary',
          },
          ownerReferences: [
            {
              apiVersion: 'postgresql.cnpg.io/v1',
              kind: 'Cluster',
              name: cluster.metadata.name,
              uid: cluster.metadata.uid ?? '',
              controller: true,
            },
          ],
        },
        spec: { containers: [{ name: 'postgres', image: imageOf(cluster) }] },
      });
    }
    const current = (existing as ApiObject | undefined)?.status?.phase;
    if ((existing || instance.server) && current !== phase)
      await this.api.request('PATCH', `${path}/${name}/status`, {
        status: { phase, podIP: '127.0.0.1' },
      });
  }

  /** Every Service reaches its selected pod's server; LoadBalancers get their address. */
  private async reconcileServices(): Promise<void> {
    const services = (await this.api.list('/api/v1/services')) as unknown as (StandInService &
      ApiObject)[];
    const pods: (ServiceEndpointCandidate & { namespace?: string })[] = [
      ...this.instances.entries(),
    ].flatMap(([key, instance]) => {
      const [namespace, name] = key.split('/');
      if (!instance.server || !name) return [];
      return [
        {
          namespace,
          labels: { 'cnpg.io/cluster': name, 'cnpg.io/instanceRole': 'primary', role: 'primary' },
          phase: instance.server.state === 'running' ? 'Running' : 'Pending',
          port: instance.server.port,
        },
      ];
    });
    pods.push(...(this.options.otherPods?.() ?? []));
    for (const service of services) {
      const namespace = service.metadata.namespace ?? 'default';
      await this.proxies.apply(
        service,
        pods.filter((pod) => pod.namespace === namespace),
      );
      const wanted = this.proxies.loadBalancerStatus(service);
      const ingress = (service.status?.loadBalancer as { ingress?: unknown[] } | undefined)
        ?.ingress;
      if (wanted.loadBalancer.ingress && !ingress?.length)
        await this.api.request(
          'PATCH',
          `/api/v1/namespaces/${namespace}/services/${service.metadata.name}/status`,
          { status: wanted },
        );
    }
    await this.proxies.retain(services);
  }

  private async secrets(namespace: string): Promise<SecretLookup> {
    const items = await this.api.list(`/api/v1/namespaces/${namespace}/secrets`);
    const byName = new Map(items.map((item) => [item.metadata.name, item as StandInSecret]));
    return (name) => byName.get(name);
  }

  private clusterPath(cluster: ApiObject): string {
    return `${CLUSTERS}/namespaces/${cluster.metadata.namespace}/clusters/${cluster.metadata.name}`;
  }
}

function imageOf(cluster: ApiObject): string {
  const image = cluster.spec?.imageName;
  return typeof image === 'string' ? image : 'postgres';
}
