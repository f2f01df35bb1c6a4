import type { Server, Socket } from 'node:net';
import { createConnection, createServer } from 'node:net';

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
  /** Where the pod's server listens on 127.0.0.1 (it stands in for podIP:targetPort). */
  port: number;
}

/** A Service's `status`, as a cloud's load balancer controller writes it. */
export interface ServiceStatus {
  loadBalancer: { ingress?: { ip: string }[] };
}

interface ProxiedService {
  server: Server;
  port: number;
  /** The local port new connections go to; none: they are closed at once. */
  target?: number;
  sockets: Set<Socket>;
}

/**
 * A STAND-IN for kube-proxy and a cloud load balancer, for tests only. Each Service gets
 * a listener on 127.0.0.1 at its first port (`spec.ports[0].port`, as its ClusterIP or
 * load balancer address would take it) that forwards each NEW connection to the first
 * Running pod its selector matches; a changed selector or pod set (apply() again) moves
 * new connections, established ones stay where they are. With no matching pod a
 * connection is reset at once (kube-proxy rejects it). What real Kubernetes does
 * differently: a ClusterIP per Service and every port of it, load spread over every
 * ready pod (readiness, not phase), Services without a selector (hand-made Endpoints),
 * NodePorts; none of that is here.
 */
export class ServiceProxies {
  private readonly services = new Map<string, ProxiedService>();

  /**
   * Makes or updates the Service's proxy from the Service and the pods of its namespace:
   * listens at its port (moving when the port changed) and points new connections at the
   * first Running pod whose labels match every selector entry.
   */
  async apply(service: StandInService, pods: readonly ServiceEndpointCandidate[]): Promise<void> {
    const key = serviceKey(service);
    const port = service.spec.ports[0]?.port;
    if (port === undefined) throw new Error(`Service ${key} has no port`);
    const target = chooseTarget(service.spec.selector, pods);
    let proxied = this.services.get(key);
    if (proxied && proxied.port !== port) {
      // Stops listening at once; its established connections go on until they end.
      proxied.server.close();
      this.services.delete(key);
      proxied = undefined;
    }
    if (!proxied) {
      proxied = { server: createServer(), port, sockets: new Set() };
      const entry = proxied;
      entry.server.on('connection', (client) => forward(client, entry));
      await listen(entry.server, port, key);
      this.services.set(key, entry);
    }
    proxied.target = target;
  }

  /** The local port a new connection to the Service reaches now, if any. */
  targetOf(service: StandInService): number | undefined {
    return this.services.get(serviceKey(service))?.target;
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

function serviceKey(service: StandInService): string {
  return `${service.metadata.namespace ?? 'default'}/${service.metadata.name}`;
}

function chooseTarget(
  selector: Record<string, string> | undefined,
  pods: readonly ServiceEndpointCandidate[],
): number | undefined {
  const entries = Object.entries(selector ?? {});
  // A Service without a selector takes hand-made Endpoints, which the stand-in does not serve.
  if (entries.length === 0) return undefined;
  const match = pods.find(
    (pod) => pod.phase === 'Running' && entries.every(([key, value]) => pod.labels[key] === value),
  );
  return match?.port;
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

async function listen(server: Server, port: number, key: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(`the proxy of Service ${key} cannot listen on 127.0.0.1:${port}: ${err.code}`),
      ),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

function closeListener(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
