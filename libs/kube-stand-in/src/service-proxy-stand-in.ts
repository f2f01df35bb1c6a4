import type { Server, Socket } from 'node:net';
import { createConnection, createServer } from 'node:net';
import { serviceOfHost } from './service-names.js';

/** What the proxies read of a v1 Service. */
export interface StandInService {
  metadata: { name: string; namespace?: string };
  spec: {
    type?: string;
    selector?: Record<string, string>;
    ports: { port: number; name?: string; targetPort?: number | string; protocol?: string }[];
  };
}

/** A pod a Service may send connections to: its labels, phase and its server's local port. */
export interface ServiceEndpointCandidate {
  labels: Record<string, string>;
  phase: string;
  /**
   * Where the pod's server listens on 127.0.0.1 (it stands in for podIP:targetPort) when
   * the pod declares no `ports`.
   */
  port: number;
  /**
   * The pod's declared ports and the local ports standing in for them: a Service's
   * targetPort (a number or a port's name) picks one.
   */
  ports?: readonly { name?: string; containerPort: number; localPort: number }[];
  /** The pod's Ready condition; left out, a Running pod counts as ready. */
  ready?: boolean;
}

/** A Service's `status`, as a cloud's load balancer controller writes it. */
export interface ServiceStatus {
  loadBalancer: { ingress?: { ip: string }[] };
}

interface ProxiedService {
  server: Server;
  /** The loopback address it listens on: 127.0.0.N for a ClusterIP Service, else 127.0.0.1. */
  host: string;
  port: number;
  /** The local port new connections go to; none: they are closed at once. */
  target?: number;
  sockets: Set<Socket>;
}

/**
 * A STAND-IN for kube-proxy, cluster DNS and a cloud load balancer, for tests only. Each
 * Service gets a listener at its first port (`spec.ports[0].port`): a ClusterIP Service on
 * a loopback address of its own, 127.0.0.N (N from 2 up, kept while the Service exists;
 * one taken by another process is passed over), a LoadBalancer Service on 127.0.0.1 (its
 * load balancer's address). It forwards each NEW connection to the first Running and
 * ready pod its selector matches, at the local port standing in for the targetPort; a
 * changed selector or pod set (apply() again) moves new connections, established ones
 * stay where they are. With no matching pod a connection is reset at once (kube-proxy
 * rejects it). resolve() answers `<svc>.<ns>.svc` names with the Service's address, for
 * the stand-ins' own connections (processes they start do not get it: no cluster DNS).
 * What real Kubernetes does differently: the ClusterIP is spec.clusterIP (the address
 * here is not written back), every port of a Service is served, load is spread over
 * every ready pod, Services without a selector (hand-made Endpoints) and NodePorts are
 * served; none of that is here.
 */
export class ServiceProxyStandIn {
  private readonly services = new Map<string, ProxiedService>();

  /**
   * Makes or updates the Service's proxy from the Service and the pods of its namespace:
   * listens at its address and port (moving when they changed) and points new connections
   * at the first Running, ready pod whose labels match every selector entry.
   */
  async apply(service: StandInService, pods: readonly ServiceEndpointCandidate[]): Promise<void> {
    const key = serviceKey(service);
    const servicePort = service.spec.ports[0];
    if (servicePort === undefined) throw new Error(`Service ${key} has no port`);
    const { port } = servicePort;
    const target = chooseTarget(service.spec.selector, servicePort.targetPort ?? port, pods);
    const clusterIp = (service.spec.type ?? 'ClusterIP') === 'ClusterIP';
    let proxied = this.services.get(key);
    // A ClusterIP Service keeps its address while it exists, even when its port changes.
    const kept = clusterIp && proxied?.host !== LOAD_BALANCER_IP ? proxied?.host : undefined;
    if (proxied && (proxied.port !== port || (proxied.host === LOAD_BALANCER_IP) === clusterIp)) {
      // Stops listening at once; its established connections go on until they end.
      proxied.server.close();
      this.services.delete(key);
      proxied = undefined;
    }
    if (!proxied) {
      const server = createServer();
      const free = this.freeClusterIps().filter((host) => host !== kept);
      const hosts = clusterIp ? [...(kept ? [kept] : []), ...free] : [LOAD_BALANCER_IP];
      const host = await listenOnFirst(server, hosts, port, key);
      const entry: ProxiedService = { server, host, port, sockets: new Set() };
      server.on('connection', (client) => forward(client, entry));
      this.services.set(key, entry);
      proxied = entry;
    }
    proxied.target = target;
  }

  /** The local port a new connection to the Service reaches now, if any. */
  targetOf(service: StandInService): number | undefined {
    return this.services.get(serviceKey(service))?.target;
  }

  /** Where the Service's listener is, once apply() made it. */
  addressOf(service: StandInService): { host: string; port: number } | undefined {
    const proxied = this.services.get(serviceKey(service));
    return proxied && { host: proxied.host, port: proxied.port };
  }

  /**
   * The address a cluster DNS name (`<svc>.<ns>.svc`, see serviceOfHost) resolves to: the
   * listener of that Service; undefined for other names and Services not (yet) proxied.
   */
  resolve(host: string): string | undefined {
    const named = serviceOfHost(host);
    return named && this.services.get(`${named.namespace}/${named.name}`)?.host;
  }

  /** Stops the Service's listener and drops its connections (the Service was deleted). */
  async remove(service: StandInService): Promise<void> {
    const key = serviceKey(service);
    const proxied = this.services.get(key);
    if (!proxied) return;
    this.services.delete(key);
    for (const socket of proxied.sockets) socket.destroy();
    await closeListener(proxied.server);
  }

  /** Removes the proxies of every Service not in `services` (they were deleted). */
  async retain(services: readonly StandInService[]): Promise<void> {
    const kept = new Set(services.map(serviceKey));
    for (const [key, proxied] of [...this.services]) {
      if (kept.has(key)) continue;
      this.services.delete(key);
      for (const socket of proxied.sockets) socket.destroy();
      await closeListener(proxied.server);
    }
  }

  /** The ClusterIP addresses no Service of ours holds, lowest first. */
  private freeClusterIps(): string[] {
    const held = new Set([...this.services.values()].map((proxied) => proxied.host));
    const free: string[] = [];
    for (let n = 2; n < 255; n++) if (!held.has(`127.0.0.${n}`)) free.push(`127.0.0.${n}`);
    return free;
  }

  /** Stops every listener and drops every connection. */
  async stopAll(): Promise<void> {
    const all = [...this.services.values()];
    this.services.clear();
    for (const proxied of all) for (const socket of proxied.sockets) socket.destroy();
    await Promise.all(all.map((proxied) => closeListener(proxied.server)));
  }

  /**
   * The `status` a load balancer controller writes: the loopback address for a
   * LoadBalancer Service (where its listener is), none for other types.
   */
  loadBalancerStatus(service: StandInService): ServiceStatus {
    if (service.spec.type !== 'LoadBalancer') return { loadBalancer: {} };
    return { loadBalancer: { ingress: [{ ip: '127.0.0.1' }] } };
  }
}

const LOAD_BALANCER_IP = '127.0.0.1';

function serviceKey(service: StandInService): string {
  return `${service.metadata.namespace ?? 'default'}/${service.metadata.name}`;
}

function chooseTarget(
  selector: Record<string, string> | undefined,
  targetPort: number | string,
  pods: readonly ServiceEndpointCandidate[],
): number | undefined {
  const entries = Object.entries(selector ?? {});
  // A Service without a selector takes hand-made Endpoints, which the stand-in does not serve.
  if (entries.length === 0) return undefined;
  for (const pod of pods) {
    if (pod.phase !== 'Running' || pod.ready === false) continue;
    if (!entries.every(([key, value]) => pod.labels[key] === value)) continue;
    const port = localTargetPort(pod, targetPort);
    if (port !== undefined) return port;
  }
  return undefined;
}

/**
 * The local port standing in for the pod's targetPort: the declared port of that number or
 * name; an undeclared number is taken as it is (a process may listen on a port it does not
 * declare); a pod that declares no ports has its one server's `port`.
 */
function localTargetPort(pod: ServiceEndpointCandidate, targetPort: number | string) {
  if (!pod.ports) return pod.port;
  const declared = pod.ports.find((p) =>
    typeof targetPort === 'number' ? p.containerPort === targetPort : p.name === targetPort,
  );
  if (declared) return declared.localPort;
  return typeof targetPort === 'number' ? targetPort : undefined;
}

function forward(client: Socket, proxied: ProxiedService): void {
  const target = proxied.target;
  if (target === undefined) {
    client.resetAndDestroy();
    return;
  }
  const upstream = createConnection({ host: '127.0.0.1', port: target });
  for (const [from, to] of [
    [client, upstream],
    [upstream, client],
  ] as const) {
    proxied.sockets.add(from);
    from.pipe(to);
    from.on('error', () => to.destroy());
    from.on('close', () => {
      proxied.sockets.delete(from);
      to.destroy();
    });
  }
}

/** Listens on the first of `hosts` where `port` is free; the address taken. */
async function listenOnFirst(
  server: Server,
  hosts: readonly string[],
  port: number,
  key: string,
): Promise<string> {
  let lastCode: string | undefined;
  for (const host of hosts) {
    const code = await new Promise<string | undefined>((resolve) => {
      const failed = (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error');
      server.once('error', failed);
      server.listen(port, host, () => {
        server.off('error', failed);
        resolve(undefined);
      });
    });
    if (code === undefined) return host;
    lastCode = code;
    // Another process's listener (a parallel test) holds this address: try the next.
    if (code !== 'EADDRINUSE') break;
  }
  const where = hosts.length === 1 ? `${hosts[0]}:${port}` : `any of 127.0.0.2-254:${port}`;
  throw new Error(`the proxy of Service ${key} cannot listen on ${where}: ${lastCode}`);
}

function closeListener(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
