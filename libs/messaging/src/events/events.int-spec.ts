import assert from 'node:assert/strict';
import { currentRequestId } from '@pgcloud/observability';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { DomainEvent } from '@pgcloud/contracts';
import { event } from '@pgcloud/contracts';
import { ensureMetadataSchema, quoteIdent } from '@pgcloud/postgres';
import amqp from 'amqplib';
import { IsString } from 'class-validator';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { EventPublisher, eventsExchange } from '../event-publisher.js';
import type { BrokerSettings } from '../rmq-options.js';
import { inboxTableSql, outboxTableSql } from './event-tables.js';
import { EventSubscriber, eventsQueueName } from './event-subscriber.js';
import { Outbox } from './outbox.js';
import { OutboxRelay } from './outbox-relay.js';

// Its own database and broker prefix, set up here: type:lib packages may not use @pgcloud/testing.
const BASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/pgcloud';
const RABBITMQ_URL = process.env['RABBITMQ_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const SCHEMA = 'svc';

class ThingHappened {
  @IsString()
  key!: string;
}
// This test's broker login (the local guest) is project-service (BROKER_USERS below).
const THING_HAPPENED = event('test.thing-happened', ThingHappened, 'project-service');

/** Keeps each line with the request it was logged under, as `[request id] message`. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private readonly keep = (message: unknown): void =>
    void this.lines.push(`[${currentRequestId() ?? '-'}] ${String(message)}`);
  log = this.keep;
  error = this.keep;
  warn = this.keep;
  debug = this.keep;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 8000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe(
  'outbox, relay and subscriber on the real PostgreSQL and RabbitMQ',
  { timeout: 90_000 },
  () => {
    const id = randomBytes(4).toString('hex');
    const url = new URL(BASE_URL);
    url.pathname = `/pgcloud_test_events_${id}`;
    const broker: BrokerSettings = {
      RABBITMQ_URL,
      RMQ_QUEUE_PREFIX: `pgcloud-test-events-${id}`,
      RMQ_PREFETCH: 10,
      BROKER_USERS: 'guest=project-service',
    };
    const logs = new CapturingLogger();
    const dataSource = new DataSource({ type: 'postgres', url: url.toString(), schema: SCHEMA });
    const publisher = new EventPublisher(broker);
    const relays: OutboxRelay[] = [];
    let outbox: Outbox;
    let connection: amqp.ChannelModel;
    let channel: amqp.Channel;
    /** Every message the exchange routed, as a bystander bound to all of them sees it. */
    const seen: { id: string; message: DomainEvent<ThingHappened> }[] = [];

    const relay = () => {
      const started = new OutboxRelay(dataSource, outbox, publisher, { pollIntervalMs: 200 });
      relays.push(started);
      started.start();
      return started;
    };
    const seenOf = (eventId: string) => seen.filter((s) => s.id === eventId);
    const add = (key: string) =>
      dataSource.transaction((manager) =>
        outbox.add(manager, THING_HAPPENED, { requestId: `req-${key}` }, { key }),
      );

    before(async () => {
      Logger.overrideLogger(logs);
      await ensureMetadataSchema(url.toString(), SCHEMA);
      await dataSource.initialize();
      await dataSource.query(outboxTableSql(SCHEMA));
      await dataSource.query(inboxTableSql(SCHEMA));
      await dataSource.query(`CREATE TABLE ${SCHEMA}.effects (key text, event_id text)`);
      outbox = new Outbox(dataSource);
      connection = await amqp.connect(RABBITMQ_URL);
      channel = await connection.createChannel();
      const exchange = eventsExchange(broker.RMQ_QUEUE_PREFIX);
      await channel.assertExchange(exchange, 'topic', { durable: true });
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchange, '#');
      await channel.consume(queue, (message) => {
        if (!message) return;
        seen.push({
          id: String(message.properties.messageId),
          message: JSON.parse(message.content.toString()) as DomainEvent<ThingHappened>,
        });
        channel.ack(message);
      });
    });

    after(async () => {
      await Promise.all(relays.map((r) => r.stop()));
      await publisher.onApplicationShutdown();
      await channel.deleteQueue(eventsQueueName(broker.RMQ_QUEUE_PREFIX, 'databases'));
      await channel.deleteExchange(eventsExchange(broker.RMQ_QUEUE_PREFIX));
      await connection.close();
      await dataSource.destroy();
      const maintenance = new URL(BASE_URL);
      maintenance.pathname = '/postgres';
      const client = new pg.Client({ connectionString: maintenance.toString() });
      await client.connect();
      const database = quoteIdent(`pgcloud_test_events_${id}`);
      await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await client.end();
    });

    it('leaves rows unsent while no relay runs, and a relay that starts sends them once', async () => {
      // As after a kill -9 between the commit and the publish: the rows wait in the table.
      const ids = [await add('early-1'), await add('early-2'), await add('early-3')];
      await sleep(500);
      assert.deepEqual(ids.flatMap(seenOf), [], 'nothing goes out without a relay');
      // Two replicas start at once: SKIP LOCKED shares the rows out, none is sent twice.
      relay();
      relay();
      await waitFor('the rows sent', () => ids.every((eventId) => seenOf(eventId).length > 0));
      await sleep(700); // a few polls more
      assert.deepEqual(
        ids.map((eventId) => seenOf(eventId).length),
        [1, 1, 1],
      );
      assert.deepEqual(
        ids.map((eventId) => seenOf(eventId)[0]?.message.payload.key),
        ['early-1', 'early-2', 'early-3'],
        'in the order written',
      );
      const unsent = await dataSource.query<unknown[]>(
        `SELECT id FROM ${SCHEMA}.outbox WHERE sent_at IS NULL`,
      );
      assert.equal(unsent.length, 0);
    });

    it('publishes an event of a committed transaction once, right after the commit', async () => {
      const started = Date.now();
      const eventId = await add('committed');
      await waitFor('the event', () => seenOf(eventId).length > 0);
      // The commit wakes the relay: no waiting for the next poll.
      assert.ok(Date.now() - started < 200, `published after ${Date.now() - started} ms`);
      await sleep(600);
      const [only, ...more] = seenOf(eventId);
      assert.equal(more.length, 0, 'published once');
      assert.equal(only?.message.event, THING_HAPPENED.name);
      assert.deepEqual(only?.message.payload, { key: 'committed' });
      assert.equal(only?.message.request_id, 'req-committed');
    });

    it('publishes nothing of a transaction that rolled back', async () => {
      let eventId = '';
      await assert.rejects(
        dataSource.transaction(async (manager) => {
          eventId = await outbox.add(manager, THING_HAPPENED, { requestId: 'r' }, { key: 'gone' });
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      await sleep(600);
      assert.deepEqual(seenOf(eventId), []);
      assert.equal(seen.filter((s) => s.message.payload.key === 'gone').length, 0);
    });

    it('refuses an event written outside a transaction', async () => {
      await assert.rejects(
        outbox.add(dataSource.manager, THING_HAPPENED, { requestId: 'r' }, { key: 'loose' }),
        /inside a transaction/,
      );
    });

    describe('a subscriber', () => {
      let subscriber: EventSubscriber;
      let failNext = 0;
      const calls: string[] = [];

      before(async () => {
        subscriber = new EventSubscriber(dataSource, broker, 'databases', { retryDelayMs: 100 });
        subscriber.on(THING_HAPPENED, async (payload, { eventId, manager }) => {
          calls.push(payload.key);
          await manager.query(`INSERT INTO ${SCHEMA}.effects (key, event_id) VALUES ($1, $2)`, [
            payload.key,
            eventId,
          ]);
          if (failNext > 0) {
            failNext--;
            throw new Error('the handler failed');
          }
        });
        await subscriber.start();
      });

      after(() => subscriber.stop());

      const effects = async (key: string) =>
        (
          await dataSource.query<{ n: number }[]>(
            `SELECT count(*)::int AS n FROM ${SCHEMA}.effects WHERE key = $1`,
            [key],
          )
        )[0]?.n ?? 0;
      const publishAs = (eventId: string, payload: object, requestId = 'req-direct') =>
        publisher.publishMessage(
          {
            event: THING_HAPPENED.name,
            payload,
            request_id: requestId,
            at: new Date().toISOString(),
          },
          eventId,
        );

      it('handles an event from the outbox', async () => {
        await add('relayed');
        await waitFor('the effect', async () => (await effects('relayed')) === 1);
      });

      it('handles an event delivered twice once', async () => {
        await publishAs('evt-twice', { key: 'twice' });
        await publishAs('evt-twice', { key: 'twice' });
        await waitFor('both deliveries', () => calls.filter((k) => k === 'twice').length >= 1);
        await sleep(500);
        assert.equal(await effects('twice'), 1);
        assert.equal(calls.filter((k) => k === 'twice').length, 1, 'the duplicate runs no handler');
      });

      it('retries a failing handler after a delay until it succeeds, its effect once', async () => {
        failNext = 2;
        const started = Date.now();
        await publishAs('evt-retried', { key: 'retried' });
        await waitFor('the effect', async () => (await effects('retried')) === 1);
        // 100 ms, then 200 ms: not a hot loop.
        assert.ok(Date.now() - started >= 300, `handled after ${Date.now() - started} ms`);
        assert.equal(calls.filter((k) => k === 'retried').length, 3);
        assert.ok(logs.lines.some((l) => l.includes('evt-retried failed (2), again in 200 ms')));
      });

      it('drops an invalid payload, logged with its request id, before any handler runs', async () => {
        await publishAs('evt-extra', { key: 'extra', unknown: 1 }, 'req-invalid-1');
        await publishAs('evt-type', { key: 42 }, 'req-invalid-2');
        await waitFor('both logged', () =>
          ['req-invalid-1', 'req-invalid-2'].every((r) =>
            logs.lines.some(
              (l) => l.startsWith(`[${r}] ${THING_HAPPENED.name}`) && l.includes('dropped'),
            ),
          ),
        );
        assert.ok(
          logs.lines.some((l) => l.includes('evt-extra dropped: invalid payload (unknown:')),
        );
        assert.ok(logs.lines.some((l) => l.includes('evt-type dropped: invalid payload (key:')));
        assert.equal(calls.includes('extra'), false);
        await assertQueueEmpty();
      });

      it('drops an event that does not name its publisher as its sender', async () => {
        const body: DomainEvent<ThingHappened> = {
          event: THING_HAPPENED.name,
          payload: { key: 'unsigned' },
          request_id: 'req-unsigned',
          at: new Date().toISOString(),
        };
        // As a publisher that names no broker login (the broker vouches only for one named).
        channel.publish(
          eventsExchange(broker.RMQ_QUEUE_PREFIX),
          THING_HAPPENED.name,
          Buffer.from(JSON.stringify(body)),
          { messageId: 'evt-unsigned', persistent: true },
        );
        await waitFor('the drop logged', () =>
          logs.lines.some((l) =>
            l.includes('evt-unsigned dropped: sent by broker login none, not by project-service'),
          ),
        );
        assert.equal(calls.includes('unsigned'), false);
        assert.equal(await effects('unsigned'), 0);
        await assertQueueEmpty();
      });

      /** Every delivery was acked, none requeued. */
      const assertQueueEmpty = async (): Promise<void> => {
        await sleep(200);
        const queue = await channel.checkQueue(
          eventsQueueName(broker.RMQ_QUEUE_PREFIX, 'databases'),
        );
        assert.equal(queue.messageCount, 0);
      };
    });
  },
);
