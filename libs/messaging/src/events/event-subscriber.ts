import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { AppName, EventDef, RequestContext, ServiceName } from '@pgcloud/contracts';
import { SERVICE_QUEUES, parseBrokerUsers } from '@pgcloud/contracts';
import { withRequestId } from '@pgcloud/observability';
import { queryRows } from '@pgcloud/postgres';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import amqp from 'amqp-connection-manager';
import type { Channel, ConsumeMessage } from 'amqplib';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, EntityManager } from 'typeorm';
import { eventsExchange } from '../event-publisher.js';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import { connectionCheck } from '@pgcloud/observability';
import type { BrokerSettings } from '../rmq-options.js';
import { inboxTable, schemaOf } from './event-tables.js';
import type { InvalidEvent, ValidEvent } from './event-validation.js';
import { readEvent } from './event-validation.js';

/** The durable queue a service's event handlers consume, with the deployment's prefix. */
export function eventsQueueName(prefix: string, service: ServiceName): string {
  return `${prefix}.${SERVICE_QUEUES[service]}.events`;
}

/**
 * Each handler holds a connection of the service's pool for its transaction and may take
 * another for work of its own: kept well under the pool's size (10), so handlers never
 * wait on each other for connections.
 */
export const DEFAULT_EVENT_PREFETCH = 4;

/** One delivery of an event, as a handler sees it. */
export interface EventDelivery {
  /** The event's id (its outbox row's): the same on every delivery of that event. */
  eventId: string;
  /** The request the event came from, for logs. */
  ctx: RequestContext;
  /** The handler's transaction: its writes commit with the inbox row, or neither does. */
  manager: EntityManager;
  /** When the event happened, as its publisher stamped it. */
  at: Date;
}

/** Handles one event; throwing rolls its transaction back and the event comes again later. */
export type EventHandler<T> = (payload: T, delivery: EventDelivery) => Promise<void>;

/** How the subscriber retries and how much it takes at once. */
export interface EventSubscriberOptions {
  /** Deliveries handled at once (the queue's prefetch); DEFAULT_EVENT_PREFETCH by default. */
  prefetch?: number;
  /** The first wait before a failed event is handled again; it doubles up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** How long handled event ids are kept against duplicates. */
  keepInboxSeconds?: number;
}

interface Registered {
  def: EventDef<object>;
  handler: EventHandler<object>;
}

/**
 * A service's consumer of domain events: a durable queue of its own bound to the events it
 * handles on the topic exchange, manual acks and a bounded prefetch. Each delivery is
 * checked to come from its publisher and validated against its payload class before any
 * handler runs (an invalid one is logged and dropped), then handled once: the event id goes into the service's inbox in
 * the handler's own transaction, so a duplicate finds it there and does nothing. A handler
 * that fails is retried after a growing delay; its delivery stays unacked meanwhile, so
 * nothing is lost if the process dies.
 */
export class EventSubscriber
  implements OnApplicationBootstrap, BeforeApplicationShutdown, ReadinessSource
{
  private readonly logger = new Logger(EventSubscriber.name);
  private readonly handlers = new Map<string, Registered>();
  private readonly inbox: string;
  private readonly queue: string;
  private readonly exchange: string;
  private readonly prefetch: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly keepInboxSeconds: number;
  private readonly users: ReadonlyMap<string, AppName>;
  private readonly failures = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private connection: AmqpConnectionManager | undefined;
  private channel: ChannelWrapper | undefined;
  private consumer: { channel: Channel; tag: string } | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly broker: BrokerSettings,
    service: ServiceName,
    options: EventSubscriberOptions = {},
  ) {
    this.inbox = inboxTable(schemaOf(dataSource.options, 'EventSubscriber'));
    this.queue = eventsQueueName(broker.RMQ_QUEUE_PREFIX, service);
    this.exchange = eventsExchange(broker.RMQ_QUEUE_PREFIX);
    this.users = parseBrokerUsers(broker.BROKER_USERS);
    this.prefetch = options.prefetch ?? DEFAULT_EVENT_PREFETCH;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.keepInboxSeconds = options.keepInboxSeconds ?? 7 * 24 * 3600;
  }

  /** Handles `def` with `handler`; call before the application starts. */
  on<T extends object>(def: EventDef<T>, handler: EventHandler<T>): void {
    if (this.connection) throw new Error(`${def.name}: handlers are registered before start`);
    if (this.handlers.has(def.name)) throw new Error(`${def.name} has a handler already`);
    this.handlers.set(def.name, {
      def,
      handler: handler as EventHandler<object>,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.handlers.size > 0) await this.start();
  }

  /** The connection events are consumed on is up, once consuming has started (/readyz). */
  readinessChecks(): ReadinessCheck[] {
    const connection = this.connection;
    return connection ? [connectionCheck('broker-events-in', () => connection.isConnected())] : [];
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Declares the queue and its bindings and starts consuming. */
  async start(): Promise<void> {
    if (this.connection) return;
    const connection = amqp.connect([this.broker.RABBITMQ_URL], {
      connectionOptions: { noDelay: true },
      heartbeatIntervalInSeconds: 5,
      reconnectTimeInSeconds: 1,
    });
    this.connection = connection;
    this.channel = connection.createChannel({
      json: false,
      setup: (channel: Channel) => this.setup(channel),
    });
    await this.channel.waitForConnect();
    this.pruneTimer = setInterval(() => void this.prune(), 3600_000);
    this.logger.log(`consuming ${[...this.handlers.keys()].join(', ')} on ${this.queue}`);
  }

  /** Stops taking deliveries and waits for the handlers running. */
  async stop(): Promise<void> {
    clearInterval(this.pruneTimer);
    this.stopping.abort();
    const consumer = this.consumer;
    this.consumer = undefined;
    if (consumer) await consumer.channel.cancel(consumer.tag).catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    // Whatever is still unacked goes back to the queue when the channel closes.
    await this.channel?.close();
    await this.connection?.close();
  }

  private async setup(channel: Channel): Promise<void> {
    await channel.assertExchange(this.exchange, 'topic', { durable: true });
    await channel.assertQueue(this.queue, { durable: true });
    for (const name of this.handlers.keys())
      await channel.bindQueue(this.queue, this.exchange, name);
    await channel.prefetch(this.prefetch);
    const { consumerTag } = await channel.consume(
      this.queue,
      (message) => {
        if (message) this.track(this.deliver(channel, message));
      },
      { noAck: false },
    );
    this.consumer = { channel, tag: consumerTag };
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** Handles one delivery to its outcome: acked when handled, dropped or a duplicate. */
  private async deliver(channel: Channel, message: ConsumeMessage): Promise<void> {
    const read = await readEvent(message, (name) => this.handlers.get(name)?.def, this.users);
    // Handled as part of the request that caused the event, so its log lines name it.
    const requestId = 'invalid' in read ? read.requestId : read.ctx.requestId;
    return withRequestId(requestId, () => this.handle(channel, message, read));
  }

  private async handle(
    channel: Channel,
    message: ConsumeMessage,
    read: ValidEvent | InvalidEvent,
  ): Promise<void> {
    if ('invalid' in read) {
      this.logDropped(read);
      return settle(() => channel.ack(message));
    }
    const { eventId, event, ctx, payload, at } = read;
    const registered = this.handlers.get(event);
    if (!registered) return settle(() => channel.ack(message));
    try {
      const handled = await this.dataSource.transaction(async (manager) => {
        const fresh = await queryRows(
          manager,
          `INSERT INTO ${this.inbox} (event_id, event, request_id) VALUES ($1, $2, $3)
           ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
          [eventId, event, ctx.requestId],
        );
        if (fresh.length === 0) return false;
        await registered.handler(payload, { eventId, ctx, manager, at });
        return true;
      });
      this.failures.delete(eventId);
      this.logger.debug(`${event} ${eventId} ${handled ? 'handled' : 'was handled before'}`);
      settle(() => channel.ack(message));
    } catch (err) {
      const failures = (this.failures.get(eventId) ?? 0) + 1;
      this.failures.set(eventId, failures);
      const delayMs = Math.min(this.retryDelayMs * 2 ** (failures - 1), this.maxRetryDelayMs);
      this.logger.warn(
        `${event} ${eventId} failed (${failures}), again in ${delayMs} ms: ` + String(err),
      );
      try {
        await sleep(delayMs, undefined, { signal: this.stopping.signal });
      } catch {
        return; // stopping: the closing channel gives the delivery back to the queue
      }
      settle(() => channel.nack(message, false, true));
    }
  }

  private logDropped(read: InvalidEvent): void {
    this.logger.error(`${read.event ?? 'event'} ${read.eventId ?? ''} dropped: ` + read.invalid);
  }

  /** Forgets handled event ids older than keepInboxSeconds. */
  async prune(): Promise<void> {
    try {
      await this.dataSource.query(
        `DELETE FROM ${this.inbox} WHERE received_at < now() - make_interval(secs => $1)`,
        [this.keepInboxSeconds],
      );
    } catch (err) {
      this.logger.warn(`inbox not pruned: ${String(err)}`);
    }
  }
}

/** Acks or nacks; a channel closed meanwhile redelivers the message, which the inbox dedupes. */
function settle(step: () => void): void {
  try {
    step();
  } catch {
    // The channel is gone; the broker gives the delivery to the next consumer.
  }
}
