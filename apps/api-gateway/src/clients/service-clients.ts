import type { OnApplicationShutdown } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import type { ServiceName } from '@pgcloud/contracts';
import { ServiceClient } from '@pgcloud/messaging';
import { GatewayConfig } from '../config.js';

/**
 * One ServiceClient per backend service, closed when the gateway stops. They are the edge:
 * a request's calls share the time until its deadline (http/request-deadline.ts), all of it.
 */
@Injectable()
export class ServiceClients implements OnApplicationShutdown {
  readonly auth: ServiceClient;
  readonly projects: ServiceClient;
  readonly databases: ServiceClient;
  readonly backups: ServiceClient;
  readonly pitr: ServiceClient;

  constructor(config: GatewayConfig) {
    const edge = { atEdge: true };
    this.auth = ServiceClient.connect(config, 'auth', config.RPC_TIMEOUT_MS, edge);
    this.projects = ServiceClient.connect(config, 'projects', config.RPC_TIMEOUT_MS, edge);
    this.databases = ServiceClient.connect(config, 'databases', config.RPC_TIMEOUT_MS, edge);
    this.backups = ServiceClient.connect(config, 'backups', config.RPC_TIMEOUT_MS, edge);
    this.pitr = ServiceClient.connect(config, 'pitr', config.RPC_TIMEOUT_MS, edge);
  }

  /** Every service, by name, for the health check; a service left out here does not compile. */
  all(): [ServiceName, ServiceClient][] {
    const byName: Record<ServiceName, ServiceClient> = {
      auth: this.auth,
      projects: this.projects,
      databases: this.databases,
      backups: this.backups,
      pitr: this.pitr,
    };
    return Object.entries(byName) as [ServiceName, ServiceClient][];
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.all().map(([, client]) => client.close()));
  }
}
