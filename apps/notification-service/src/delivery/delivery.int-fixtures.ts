import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { SecretBox } from '@pgcloud/config';
import { newId } from '@pgcloud/contracts';
import { loadLauncherEnv, newRunId } from '@pgcloud/devstack';
import { ensureMetadataSchema, quoteIdent } from '@pgcloud/postgres';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config.js';
import { EndpointEntity } from '../endpoints/endpoint.entity.js';
import { EndpointsRepository } from '../endpoints/endpoints.repository.js';
import type { WebhookEvent } from '../events/webhook-events.js';
import { webhookBody } from '../events/webhook-events.js';
import { CreateWebhooks1765000000000 } from '../migrations/1765000000000-create-webhooks.js';
import { EventTables1765000000001 } from '../migrations/1765000000001-event-tables.js';
import { newWebhookSecret, secretSealedFor } from '../signing/webhook-secret.js';
import { TargetClient } from '../targets/target-client.js';
import { Deliverer } from './deliverer.js';
import { DeliveryWorker } from './delivery-worker.js';
import { MessagesRepository } from './messages.repository.js';

// The delivery worker's integration specs: a metadata database of their own with the
// service's migrations, a receiver on loopback, and workers with the settings a test gives.

/** One request a receiver took. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  /** When it came, in epoch milliseconds. */
  at: number;
}

/** An HTTP receiver on 127.0.0.1 whose answer each test decides (200 unless told). */
export class Receiver {
  readonly received: Received[] = [];
  /** The status to answer, at once or later. */
  reply: (request: Received) => number | Promise<number> = () => 200;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server);
    server.on('request', (request, response) => void receiver.take(request, response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The receiver's URL on `host`, at a path of the test's own. */
  url(path: string, host = '127.0.0.1', scheme = 'http'): string {
    return `${scheme}://${host}:${this.port}${path}`;
  }

  /** The requests that came to `path`. */
  at(path: string): Received[] {
    return this.received.filter((request) => request.headers['x-path'] === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }

  private async take(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
    );
    const received = {
      headers: { ...headers, 'x-path': request.url ?? '' },
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    };
    this.received.push(received);
    const status = await this.reply(received);
    if (!response.destroyed) response.writeHead(status).end();
  }
}

/** Keeps every line logged, so a test can check what never reaches the logs. */
export class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (message: unknown): void => void this.lines.push(String(message));
  error = (message: unknown): void => void this.lines.push(String(message));
  warn = (message: unknown): void => void this.lines.push(String(message));
  debug = (message: unknown): void => void this.lines.push(String(message));
  verbose = (message: unknown): void => void this.lines.push(String(message));
}

/** An endpoint as a test made it, with its secret. */
export interface TestEndpoint {
  id: string;
  projectId: string;
  secret: string;
}

/** A database of its own with notification-service's tables, and workers on it. */
export class DeliveryTestDatabase {
  readonly key = randomBytes(32);
  readonly box = new SecretBox(this.key);
  readonly dataSource: DataSource;
  readonly messages: MessagesRepository;
  readonly endpoints: EndpointsRepository;
  readonly logs = new CapturingLogger();
  /** Every secret and URL of the endpoints made, and every body sent. */
  readonly secrets: string[] = [];
  private readonly url = new URL(loadLauncherEnv().DATABASE_URL);
  private readonly workers: DeliveryWorker[] = [];

  constructor() {
    this.url.pathname = `/pgcloud_test_${newRunId().replace(/-/g, '_')}`;
    this.dataSource = new DataSource({
      type: 'postgres',
      url: this.url.toString(),
      schema: 'notifications',
      entities: [EndpointEntity],
      migrations: [CreateWebhooks1765000000000, EventTables1765000000001],
      extra: { max: 20 },
    });
    this.messages = new MessagesRepository(this.dataSource);
    this.endpoints = new EndpointsRepository(this.dataSource);
  }

  async create(): Promise<void> {
    Logger.overrideLogger(this.logs);
    await ensureMetadataSchema(this.url.toString(), 'notifications');
    await this.dataSource.initialize();
    await this.dataSource.runMigrations({ transaction: 'all' });
  }

  async drop(): Promise<void> {
    await this.stopWorkers();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    const maintenance = new URL(this.url);
    maintenance.pathname = '/postgres';
    const client = new pg.Client({ connectionString: maintenance.toString() });
    await client.connect();
    try {
      const name = decodeURIComponent(this.url.pathname.slice(1));
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }

  /**
   * Starts a worker with these settings over quick test ones (private targets allowed,
   * 1 s retries, a 50 ms poll).
   */
  startWorker(env: Record<string, string> = {}): DeliveryWorker {
    const config = loadConfig({
      ENCRYPTION_KEY: this.key.toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_TIMEOUT_SECONDS: '5',
      ...env,
    });
    const client = new TargetClient({
      timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    });
    const worker = new DeliveryWorker(
      this.messages,
      new Deliverer(this.messages, client, this.box, config),
      config,
    );
    this.workers.push(worker);
    worker.start();
    return worker;
  }

  /** Stops the workers, and gives up what they left pending: each test starts clean. */
  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((worker) => worker.stop()));
    if (this.dataSource.isInitialized)
      await this.sql(
        `UPDATE notifications.messages SET status = 'failed' WHERE status = 'pending'`,
      );
  }

  /** A new endpoint of a new project, subscribed to every event. */
  async endpoint(url: string): Promise<TestEndpoint> {
    const [id, projectId, secret] = [newId('whk'), newId('proj'), newWebhookSecret()];
    this.secrets.push(secret, url);
    await this.endpoints.insert(
      {
        id,
        projectId,
        url,
        events: ['*'],
        description: null,
        secretSealed: this.box.seal(secret, secretSealedFor(id)),
      },
      () => undefined,
    );
    return { id, projectId, secret };
  }

  /** An event of the endpoint's project about `databaseId`, as the listener writes it. */
  async event(endpoint: TestEndpoint, databaseId: string, type = 'database.running') {
    const event = {
      type,
      projectId: endpoint.projectId,
      databaseId,
      data: { project_id: endpoint.projectId, database_id: databaseId },
    } as WebhookEvent;
    const [eventId, body] = [randomUUID(), webhookBody(event, new Date())];
    this.secrets.push(body);
    await this.dataSource.transaction((manager) =>
      this.messages.insertForEvent(manager, eventId, event, body),
    );
    const [message] = await this.sql<{ id: string }>(
      'SELECT id FROM notifications.messages WHERE event_id = $1',
      [eventId],
    );
    assert.ok(message);
    return { id: message.id, body };
  }

  sql<T>(text: string, values: unknown[] = []): Promise<T[]> {
    return this.dataSource.query<T[]>(text, values);
  }

  /** The endpoint's attempts, oldest first. */
  deliveries(endpointId: string) {
    return this.sql<{
      message_id: string;
      attempt: number;
      status_code: number | null;
      error: string | null;
      next_attempt_at: Date | null;
    }>(
      `SELECT message_id, attempt, status_code, error, next_attempt_at
         FROM notifications.deliveries WHERE endpoint_id = $1 ORDER BY seq`,
      [endpointId],
    );
  }
}

/** Polls until `check` holds, failing the test after timeoutMs. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
