import type { AppName, ServiceName } from '@pgcloud/contracts';
import { RpcClient, ServiceClient } from '@pgcloud/messaging';
import pg from 'pg';
import { brokerUrlOf, ensureBrokerLogins } from './broker-logins.js';
import { loadLauncherEnv } from './launcher-env.js';
import { dropIsolatedResources, isolatedEnv } from './isolated-resources.js';

/**
 * What an integration test needs to run one service in its own process against the real
 * PostgreSQL and RabbitMQ: settings with a database and queues of its own, each app's
 * broker login, clients that talk to the service as the gateway does, SQL on its
 * database, and a cleanup.
 */
export class Isolation {
  private readonly clients: { close(): Promise<void> }[] = [];
  private pool: pg.Pool | undefined;

  private constructor(readonly env: Record<string, string>) {}

  static create(overrides: Record<string, string> = {}): Isolation {
    const launcher = loadLauncherEnv();
    return new Isolation({ ...isolatedEnv(launcher), LOG_LEVEL: 'warn', ...overrides });
  }

  /**
   * Makes sure each app's broker login exists (broker-logins.ts): call it before the
   * service starts or a client sends.
   */
  async brokerLogins(): Promise<void> {
    await ensureBrokerLogins(this.env['RABBITMQ_URL'] ?? '');
  }

  /** The settings, with `app`'s own broker login: what the service under test runs with. */
  envOf(app: AppName): Record<string, string> {
    return { ...this.env, RABBITMQ_URL: brokerUrlOf(this.env['RABBITMQ_URL'] ?? '', app) };
  }

  /** A client of the service, as the gateway calls it; closed by cleanup(). */
  client(service: ServiceName, timeoutMs = 5000): RpcClient {
    const client = new RpcClient(loadLauncherEnv(this.envOf('api-gateway')), {
      calls: [service],
      timeoutMs,
    });
    this.clients.push(client);
    return client;
  }

  /** An untyped client of the service's queue, for messages no declaration allows. */
  rawClient(service: ServiceName, timeoutMs = 5000): ServiceClient {
    const client = ServiceClient.connect(
      loadLauncherEnv(this.envOf('api-gateway')),
      service,
      timeoutMs,
    );
    this.clients.push(client);
    return client;
  }

  /** Runs SQL on the isolated metadata database. */
  async sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
    this.pool ??= new pg.Pool({ connectionString: this.env['DATABASE_URL'], max: 2 });
    return (await this.pool.query<T>(text, values)).rows;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.clients.map((client) => client.close()));
    await this.pool?.end();
    await dropIsolatedResources(this.env);
  }
}
