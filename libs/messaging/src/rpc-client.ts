import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { HealthPong, RequestContext, RpcDef, ServiceName } from '@pgcloud/contracts';
import { HEALTH_PING } from '@pgcloud/contracts';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import { connectionCheck } from '@pgcloud/observability';
import { getMetadataStorage } from 'class-validator';
import { rpcClientSeconds, timed } from './rpc-metrics.js';
import type { BrokerSettings } from './rmq-options.js';
import { ServiceClient } from './service-client.js';

/** Which services a process calls, and how. */
export interface RpcClientOptions {
  /**
   * The services this process may call: the call graph's edges from it
   * (docs/architecture.md#calls-and-events).
   */
  calls: readonly ServiceName[];
  /** Requests wait for answers this long at most (RPC_TIMEOUT_MS). */
  timeoutMs: number;
  /** The gateway: its calls share the time until the request's deadline, all of it. */
  atEdge?: boolean;
}

/**
 * The one client of the catalogue: `call(DATABASE_PATTERNS.get, ctx, ref)` sends to the
 * service the declaration names and answers the declared type. A process names the
 * services it calls when it is built; a call to any other is a programming error, so the
 * call graph cannot grow an edge by accident.
 */
export class RpcClient implements OnApplicationBootstrap, OnApplicationShutdown, ReadinessSource {
  private readonly clients = new Map<ServiceName, ServiceClient>();

  constructor(broker: BrokerSettings, options: RpcClientOptions) {
    for (const service of options.calls)
      this.clients.set(
        service,
        ServiceClient.connect(broker, service, options.timeoutMs, { atEdge: options.atEdge }),
      );
  }

  /** Sends one request and waits for its answer (ServiceClient.send says how long). */
  async call<TRequest extends object, TResponse>(
    def: RpcDef<TRequest, TResponse>,
    ctx: RequestContext,
    payload: NoInfer<TRequest>,
    timeoutMs?: number,
  ): Promise<TResponse> {
    const client = this.client(def.service);
    return (await timed(rpcClientSeconds, def.pattern, () =>
      client.send(def.pattern, ctx, declaredPart(def, payload), timeoutMs),
    )) as TResponse;
  }

  /** The health ping every service answers. */
  async ping(service: ServiceName, ctx: RequestContext, timeoutMs?: number): Promise<HealthPong> {
    return (await this.client(service).send(HEALTH_PING, ctx, {}, timeoutMs)) as HealthPong;
  }

  /** The services this process calls. */
  services(): ServiceName[] {
    return [...this.clients.keys()];
  }

  /** Closes the connections to the broker; the process can then exit. */
  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.close()));
  }

  /** One check per service called: its connection to the broker is up (/readyz). */
  readinessChecks(): ReadinessCheck[] {
    return [...this.clients].map(([service, client]) =>
      connectionCheck(`broker-calls-${service}`, () => client.isConnected()),
    );
  }

  onApplicationBootstrap(): void {
    for (const client of this.clients.values()) client.connectEarly();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private client(service: ServiceName): ServiceClient {
    const client = this.clients.get(service);
    if (!client) throw new Error(`this process does not call the ${service} service`);
    return client;
  }
}

/** The field names of each request class, read once from its class-validator rules. */
const declaredNames = new WeakMap<object, ReadonlySet<string>>();

function namesOf(request: object): ReadonlySet<string> {
  const known = declaredNames.get(request);
  if (known) return known;
  const names = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(request as new () => object, '', true, false)
      .map((rule) => rule.propertyName),
  );
  declaredNames.set(request, names);
  return names;
}

/**
 * The fields of `payload` its declaration names: a caller may hold a wider object (a
 * BackupRef where a DatabaseRef is asked), and the service asked refuses fields it does not
 * know, so only the declared ones are sent.
 */
function declaredPart<T extends object>(def: RpcDef<T, unknown>, payload: T): Partial<T> {
  const names = namesOf(def.request);
  return Object.fromEntries(
    Object.entries(payload).filter(([name]) => names.has(name)),
  ) as Partial<T>;
}
