import { randomUUID } from 'node:crypto';
import type { OnApplicationShutdown } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { DomainEvent, EventDef, RequestContext } from '@pgcloud/contracts';
import { EVENTS_EXCHANGE, brokerLoginOf } from '@pgcloud/contracts';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import amqp from 'amqp-connection-manager';
import type { Channel } from 'amqplib';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import { connectionCheck, withRequestId } from '@pgcloud/observability';
import type { BrokerSettings } from './rmq-options.js';

/** The deployment's events exchange. */
export function eventsExchange(prefix: string): string {
  return `${prefix}.${EVENTS_EXCHANGE}`;
}

/**
 * Publishes domain events to the durable topic exchange, routed by event name, as
 * persistent messages the broker confirms, each naming its publisher's broker login as
 * its `user-id`. Consumers bind queues of their own.
 */
export class EventPublisher implements OnApplicationShutdown, ReadinessSource {
  private readonly logger = new Logger(EventPublisher.name);
  private readonly connection: AmqpConnectionManager;
  private readonly channel: ChannelWrapper;
  private readonly exchange: string;
  private readonly login: string;

  constructor(broker: BrokerSettings) {
    this.exchange = eventsExchange(broker.RMQ_QUEUE_PREFIX);
    this.login = brokerLoginOf(broker.RABBITMQ_URL);
    this.connection = amqp.connect([broker.RABBITMQ_URL], {
      connectionOptions: { noDelay: true },
      heartbeatIntervalInSeconds: 5,
      reconnectTimeInSeconds: 1,
    });
    this.channel = this.connection.createChannel({
      json: false,
      // While the broker is away messages wait in memory; past this the publish fails.
      publishTimeout: 5000,
      setup: (channel: Channel) =>
        channel.assertExchange(this.exchange, 'topic', { durable: true }),
    });
  }

  /** Publishes one event and waits for the broker's confirm. */
  async publish<T extends object>(
    def: EventDef<T>,
    ctx: RequestContext,
    payload: T,
  ): Promise<void> {
    const message: DomainEvent<T> = {
      event: def.name,
      payload,
      request_id: ctx.requestId,
      at: new Date().toISOString(),
    };
    await this.publishMessage(message, randomUUID());
  }

  /**
   * Publishes an event as written earlier (the outbox relay's), under the id consumers
   * deduplicate on, and waits for the broker's confirm.
   */
  async publishMessage(message: DomainEvent<unknown>, messageId: string): Promise<void> {
    const { event } = message;
    await this.channel.publish(this.exchange, event, Buffer.from(JSON.stringify(message)), {
      persistent: true,
      contentType: 'application/json',
      messageId,
      userId: this.login,
      headers: { 'x-request-id': message.request_id },
    });
    withRequestId(message.request_id, () => this.logger.debug(`published ${event} ${messageId}`));
  }

  /** The connection events are published on is up (/readyz). */
  readinessChecks(): ReadinessCheck[] {
    return [connectionCheck('broker-events-out', () => this.connection.isConnected())];
  }

  async onApplicationShutdown(): Promise<void> {
    await this.channel.close();
    await this.connection.close();
  }
}
