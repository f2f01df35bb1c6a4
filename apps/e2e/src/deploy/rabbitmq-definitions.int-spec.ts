import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AppName, EventDef, ServiceName } from '@pgcloud/contracts';
import * as contracts from '@pgcloud/contracts';
import { HEALTH_PING, SERVICE_CALLS } from '@pgcloud/contracts';
import type { BrokerSettings } from '@pgcloud/messaging';
import {
  BrokerServer,
  EventPublisher,
  ServiceClient,
  eventsExchange,
  eventsQueueName,
  brokerServerOptions,
  queueName,
} from '@pgcloud/messaging';
import { PrivateRabbitMq } from '@pgcloud/devstack';
import amqp from 'amqplib';
import type { Channel, ChannelModel } from 'amqplib';
import { brokerUses } from './broker-topology.js';
import type { Manifest } from './manifests.js';
import { KUBERNETES_DIR } from './manifests.js';

const PREFIX = 'pgcloud';
const APPS = Object.keys(SERVICE_CALLS) as AppName[];
const EVENTS = Object.fromEntries(
  Object.entries(contracts)
    .filter(([name]) => name.endsWith('_EVENTS'))
    .flatMap(([, group]) => Object.values(group as Record<string, EventDef<object>>))
    .map((def) => [def.name, def]),
) as Record<string, EventDef<object>>;

/**
 * The dev overlay's broker for real: a RabbitMQ node that loads the definitions
 * make-secrets.mjs writes (the repository's, with password hashes), and each app logging
 * in with the RABBITMQ_URL of its Secret to do what its code does on the broker, with
 * libs/messaging's own client, server and publisher where they can run without a
 * database.
 */
describe('the RabbitMQ definitions on a broker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgcloud-definitions-'));
  let broker: PrivateRabbitMq;
  const urls = new Map<AppName, string>();
  const servers: BrokerServer[] = [];
  const connections: ChannelModel[] = [];

  const settings = (app: AppName): BrokerSettings => ({
    RABBITMQ_URL: urls.get(app) ?? '',
    RMQ_QUEUE_PREFIX: PREFIX,
    RMQ_PREFETCH: 4,
  });

  const connect = async (app: AppName): Promise<ChannelModel> => {
    const connection = await amqp.connect(urls.get(app) ?? '');
    connection.on('error', () => undefined);
    connections.push(connection);
    return connection;
  };

  /** Runs `step` on a channel of its own and says how the broker took it. */
  const attempt = async (
    app: AppName,
    step: (channel: Channel) => Promise<unknown>,
  ): Promise<'allowed' | 'refused'> => {
    const connection = await connect(app);
    const channel = await connection.createConfirmChannel();
    let closedWith: unknown;
    channel.on('error', (err) => (closedWith = err));
    try {
      await step(channel);
      await channel.waitForConfirms();
      await channel.close();
      return 'allowed';
    } catch (err) {
      if (/ACCESS.REFUSED/.test(`${String(err)} ${String(closedWith)}`)) return 'refused';
      throw err;
    }
  };

  before(async () => {
    const output = execFileSync(
      process.execPath,
      [join(KUBERNETES_DIR, 'overlays', 'dev', 'make-secrets.mjs')],
      { encoding: 'utf8' },
    );
    const items = (
      JSON.parse(output) as { items: (Manifest & { stringData: Record<string, string> })[] }
    ).items;
    const secret = (name: string): Record<string, string> =>
      items.find((item) => item.metadata.name === name)?.stringData ?? {};
    const file = join(dir, 'definitions.json');
    writeFileSync(file, secret('rabbitmq-definitions')['definitions.json'] ?? '', { mode: 0o600 });
    broker = await PrivateRabbitMq.start({ config: [`load_definitions = ${file}`] });
    for (const app of APPS) {
      const url = new URL(secret(`${app}-secrets`)['RABBITMQ_URL'] ?? '');
      url.host = `127.0.0.1:${broker.port}`;
      urls.set(app, url.href);
    }
    // Every service answers the health ping, as its own user, on pgcloud's transport.
    for (const use of brokerUses()) {
      if (!use.serves) continue;
      const service: ServiceName = use.serves;
      const server = new BrokerServer(brokerServerOptions(settings(use.app), service));
      server.addHandler(HEALTH_PING, () => Promise.resolve({ service }));
      await new Promise<void>((resolve, reject) => {
        void server.listen((err?: unknown) =>
          err ? reject(err instanceof Error ? err : new Error(JSON.stringify(err))) : resolve(),
        );
      });
      servers.push(server);
    }
  });

  after(async () => {
    await Promise.allSettled(servers.map((server) => server.close()));
    await Promise.allSettled(connections.map((connection) => connection.close()));
    await broker?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets each app call the services it calls, as its own user', async () => {
    for (const app of APPS) {
      for (const callee of SERVICE_CALLS[app]) {
        const client = ServiceClient.connect(settings(app), callee, 5000);
        try {
          const answer = await client.send(HEALTH_PING, { requestId: randomUUID() }, {});
          assert.deepEqual(answer, { service: callee }, `${app} -> ${callee}`);
        } finally {
          await client.close();
        }
      }
    }
  });

  it('delivers each event from its owner to the queues of the apps that handle it', async () => {
    const uses = brokerUses();
    const received = new Map<string, Set<string>>();
    for (const use of uses) {
      if (!use.serves || use.subscribes.length === 0) continue;
      // What EventSubscriber.setup does, as the subscriber's user.
      const channel = await (await connect(use.app)).createChannel();
      const queue = eventsQueueName(PREFIX, use.serves);
      await channel.assertExchange(eventsExchange(PREFIX), 'topic', { durable: true });
      await channel.assertQueue(queue, { durable: true });
      for (const event of use.subscribes)
        await channel.bindQueue(queue, eventsExchange(PREFIX), event);
      received.set(use.app, new Set());
      await channel.consume(
        queue,
        (message) => {
          if (!message) return;
          received.get(use.app)?.add(message.fields.routingKey);
          channel.ack(message);
        },
        { noAck: false },
      );
    }
    for (const use of uses) {
      if (use.publishes.length === 0) continue;
      const publisher = new EventPublisher(settings(use.app));
      try {
        for (const event of use.publishes) {
          const def = EVENTS[event];
          assert.ok(def);
          await publisher.publish(def, { requestId: randomUUID() }, {});
        }
      } finally {
        await publisher.onApplicationShutdown();
      }
    }
    const expected = Object.fromEntries(
      uses.filter((u) => u.subscribes.length > 0).map((u) => [u.app, u.subscribes]),
    );
    const deadline = Date.now() + 5000;
    const got = () =>
      Object.fromEntries([...received].map(([app, events]) => [app, [...events].sort()]));
    while (JSON.stringify(got()) !== JSON.stringify(expected) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(got(), expected);
  });

  it("refuses an app another's queues and another's events", async () => {
    const events = eventsExchange(PREFIX);
    const outcomes = {
      'auth-service consumes project-service requests': await attempt('auth-service', (ch) =>
        ch.consume(queueName(PREFIX, 'projects'), () => undefined, { noAck: false }),
      ),
      'pitr-worker consumes backup-service events': await attempt('pitr-worker', (ch) =>
        ch.consume(eventsQueueName(PREFIX, 'backups'), () => undefined, { noAck: false }),
      ),
      'project-service declares the auth-service queue': await attempt('project-service', (ch) =>
        ch.assertQueue(queueName(PREFIX, 'auth'), { durable: true }),
      ),
      'the gateway publishes an event': await attempt('api-gateway', (ch) =>
        Promise.resolve(ch.publish(events, 'project.deleted', Buffer.from('{}'))),
      ),
      'backup-service publishes database.deleted': await attempt('backup-service', (ch) =>
        Promise.resolve(ch.publish(events, 'database.deleted', Buffer.from('{}'))),
      ),
      'pitr-worker binds project.deleted': await attempt('pitr-worker', (ch) =>
        ch.bindQueue(eventsQueueName(PREFIX, 'pitr'), events, 'project.deleted'),
      ),
      'notification-service publishes an event': await attempt('notification-service', (ch) =>
        Promise.resolve(ch.publish(events, 'database.status-changed', Buffer.from('{}'))),
      ),
      'notification-service binds database.created': await attempt('notification-service', (ch) =>
        ch.bindQueue(eventsQueueName(PREFIX, 'notifications'), events, 'database.created'),
      ),
      'notification-service consumes project-service requests': await attempt(
        'notification-service',
        (ch) => ch.consume(queueName(PREFIX, 'projects'), () => undefined, { noAck: false }),
      ),
    };
    for (const [what, outcome] of Object.entries(outcomes)) assert.equal(outcome, 'refused', what);
  });

  it('still lets any app put a message on any queue through the default exchange', async () => {
    // The limit README.md states: requests and replies need the default exchange.
    const outcome = await attempt('auth-service', (ch) =>
      Promise.resolve(ch.sendToQueue(eventsQueueName(PREFIX, 'backups'), Buffer.from('{}'))),
    );
    assert.equal(outcome, 'allowed');
  });

  it('refuses a wrong password', async () => {
    const url = new URL(urls.get('auth-service') ?? '');
    url.password = 'wrong';
    await assert.rejects(amqp.connect(url.href), /ACCESS.REFUSED/);
  });
});
