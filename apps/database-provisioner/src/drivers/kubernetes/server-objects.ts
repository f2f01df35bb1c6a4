import type { KubernetesObject, V1Pod, V1Service } from '@kubernetes/client-node';
import {
  SERVER_ID_LABEL,
  CLUSTER_KIND,
  CNPG_API_VERSION,
  CNPG_CLUSTER_LABEL,
} from '@pgcloud/kubernetes';
import type { ServerEndpoint } from '../database-driver.js';
import type { KubeObjects, ObjectRef } from './kube-objects.js';
import type { ServerNames } from './server-names.js';
import { MANAGED_BY, QUARANTINED_AT_LABEL, serverNames } from './server-names.js';
import { RESTORE_OF_LABEL, restoreName } from './restore-objects.js';
import { waitUntil } from './wait-until.js';

/** How long and how often the driver waits for the platform. */
export interface Waiting {
  timeoutMs: number;
  pollMs: number;
}

/**
 * A server's objects in the Kubernetes API: which namespace it is in (found through its
 * Service, the one object every server has), its Service and where it answers, and its
 * objects by label.
 */
export class ServerObjects {
  private readonly located = new Map<string, string>();

  constructor(
    readonly objects: KubeObjects,
    private readonly namespaces: readonly string[],
    private readonly waits: Waiting,
  ) {}

  /** The names of a server's objects in `namespace`, remembered for later lookups. */
  place(serverId: string, namespace: string): ServerNames {
    this.located.set(serverId, namespace);
    return serverNames(serverId, namespace);
  }

  forget(serverId: string): void {
    this.located.delete(serverId);
  }

  /** The names of a server's objects, from the namespace its Service is in. */
  async namesOf(serverId: string): Promise<ServerNames | undefined> {
    const known = this.located.get(serverId);
    if (known) return serverNames(serverId, known);
    for (const namespace of this.namespaces) {
      const names = serverNames(serverId, namespace);
      if (await this.service(names)) return this.place(serverId, namespace);
    }
    return undefined;
  }

  /** A server's names and Service; throws when it has none. */
  async existing(serverId: string): Promise<{ names: ServerNames; service: V1Service }> {
    const names = await this.namesOf(serverId);
    const service = names && (await this.service(names));
    if (!names || !service) throw new Error(`server ${serverId} does not exist`);
    return { names, service };
  }

  service(names: ServerNames): Promise<V1Service | undefined> {
    return this.objects.get<V1Service>({ apiVersion: 'v1', kind: 'Service', ...at(names) });
  }

  /** The Services of every server, in every region's namespace (not a restore's own). */
  async services(): Promise<V1Service[]> {
    const all: V1Service[] = [];
    for (const namespace of this.namespaces)
      all.push(...(await this.objects.list<V1Service>('v1', 'Service', namespace, MANAGED_BY)));
    return all.filter((service) => !service.metadata?.labels?.[RESTORE_OF_LABEL]);
  }

  /** The ids of the servers pgcloud runs here, those set aside left out. */
  async serverIds(): Promise<string[]> {
    const ids = new Set<string>();
    for (const service of await this.services()) {
      const serverId = service.metadata?.labels?.[SERVER_ID_LABEL];
      if (serverId && !isQuarantined(service)) ids.add(serverId);
    }
    return [...ids];
  }

  /** The Service a restore's Job serves its data through, if there is one. */
  async deleteRestoreService(names: ServerNames): Promise<void> {
    await this.objects.delete({
      apiVersion: 'v1',
      kind: 'Service',
      ...at(names, restoreName(names)),
    });
  }

  /**
   * Where clients reach the server: behind a load balancer, the address it was given
   * (waited for); otherwise the Service's name inside the cluster.
   */
  async endpointOf(
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

  /** The server's objects of a kind (its Clusters, its Secrets). */
  labelled<T extends KubernetesObject>(
    names: ServerNames,
    apiVersion: string,
    kind: string,
  ): Promise<T[]> {
    return this.objects.list<T>(apiVersion, kind, names.namespace, names.labels);
  }

  async deleteLabelled(
    names: ServerNames,
    apiVersion: string,
    kind: string,
    propagation: 'Foreground' | 'Background' = 'Background',
  ): Promise<void> {
    for (const object of await this.labelled(names, apiVersion, kind))
      await this.objects.delete(
        { apiVersion, kind, ...at(names, object.metadata?.name) },
        propagation,
      );
  }

  /** Until no pod of these Clusters runs (a hibernated Cluster's pods end). */
  async waitForStopped(names: ServerNames, clusters: readonly string[]): Promise<void> {
    await waitUntil(
      async () => {
        for (const cluster of clusters) {
          const pods = await this.objects.list<V1Pod>('v1', 'Pod', names.namespace, {
            [CNPG_CLUSTER_LABEL]: cluster,
          });
          if (pods.some((pod) => pod.status?.phase === 'Running')) return undefined;
        }
        return true;
      },
      { ...this.waiting(), what: `the pods of ${clusters.join(', ')} stopped` },
    );
  }

  waiting(signal?: AbortSignal): Waiting & { signal?: AbortSignal } {
    return { ...this.waits, ...(signal ? { signal } : {}) };
  }
}

/** A Cluster of the server. */
export function clusterRef(names: ServerNames, cluster: string): ObjectRef {
  return { apiVersion: CNPG_API_VERSION, kind: CLUSTER_KIND, ...at(names, cluster) };
}

/** A Secret of the server. */
export function secretRef(names: ServerNames, name: string): ObjectRef {
  return { apiVersion: 'v1', kind: 'Secret', ...at(names, name) };
}

/** The server's Service. */
export function serviceRef(names: ServerNames): ObjectRef {
  return { apiVersion: 'v1', kind: 'Service', ...at(names) };
}

function at(names: ServerNames, name = names.base): { namespace: string; name: string } {
  return { namespace: names.namespace, name };
}

/** Whether the server was set aside (quarantine): it counts as gone until purged. */
export function isQuarantined(service: V1Service): boolean {
  return service.metadata?.labels?.[QUARANTINED_AT_LABEL] !== undefined;
}

/** The Cluster pgcloud's Service points at: the server's current generation. */
export function selectedCluster(service: V1Service): string {
  const cluster = service.spec?.selector?.[CNPG_CLUSTER_LABEL];
  if (!cluster) throw new Error(`Service ${service.metadata?.name} selects no Cluster`);
  return cluster;
}
