import type { OnApplicationShutdown } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import { ClientProxyFactory } from '@nestjs/microservices';
import type { ServiceName } from '@pgcloud/contracts';
import { SERVICE_QUEUES } from '@pgcloud/contracts';
import { ServiceClient, rmqClientOptions } from '@pgcloud/messaging';
import { GatewayConfig } from '../config.js';

/** One ServiceClient per backend service, closed when the gateway stops. */
@Injectable()
export class ServiceClients implements OnApplicationShutdown {
  private readonly proxies: ClientProxy[] = [];
  readonly auth: ServiceClient;
  readonly projects: ServiceClient;
  readonly databases: ServiceClient;

  constructor(config: GatewayConfig) {
    this.auth = this.create(config, 'auth');
    this.projects = this.create(config, 'projects');
    this.databases = this.create(config, 'databases');
  }

  /** Every service, by name, for the health check. */
  all(): [ServiceName, ServiceClient][] {
    return [
      ['auth', this.auth],
      ['projects', this.projects],
      ['databases', this.databases],
    ];
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      this.proxies.map(async (proxy) => {
        await proxy.close();
      }),
    );
  }

  private create(config: GatewayConfig, service: ServiceName): ServiceClient {
    const proxy = ClientProxyFactory.create(rmqClientOptions(config, service));
    this.proxies.push(proxy);
    return new ServiceClient(SERVICE_QUEUES[service], proxy, config.RPC_TIMEOUT_MS);
  }
}
