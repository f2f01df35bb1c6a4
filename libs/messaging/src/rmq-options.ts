import { Transport } from '@nestjs/microservices';
import type { RmqOptions } from '@nestjs/microservices';
import type { ServiceName } from '@pgcloud/contracts';
import { SERVICE_QUEUES } from '@pgcloud/contracts';
import type { BrokerServerOptions } from './broker-server.js';

/** The broker settings a service or a client needs. */
export interface BrokerSettings {
  /** Its login is the sender every message names (AMQP `user-id`). */
  RABBITMQ_URL: string;
  /** Which app each broker login is (CommonEnv); unset, each app's login is its name. */
  BROKER_USERS?: string;
  RMQ_QUEUE_PREFIX: string;
  RMQ_PREFETCH: number;
}

/** The queue a service consumes, with the deployment's prefix. */
export function queueName(prefix: string, service: ServiceName): string {
  return `${prefix}.${SERVICE_QUEUES[service]}`;
}

/**
 * Amqplib buffers small frames for 40 ms without TCP_NODELAY (Nagle): every request would
 * pay it. Heartbeats find a dead broker within seconds; a lost connection is retried each
 * second. Services and their callers use the same.
 */
export const BROKER_SOCKET_OPTIONS = {
  connectionOptions: { noDelay: true },
  heartbeatIntervalInSeconds: 5,
  reconnectTimeInSeconds: 1,
};

/** A service's consumer (BrokerServer): its durable queue and its prefetch. */
export function brokerServerOptions(
  broker: BrokerSettings,
  service: ServiceName,
): BrokerServerOptions {
  return {
    url: broker.RABBITMQ_URL,
    queue: queueName(broker.RMQ_QUEUE_PREFIX, service),
    prefetch: broker.RMQ_PREFETCH,
  };
}

/**
 * A caller of a service: requests go to the service's durable queue as transient messages.
 * A request is not work to keep (long work lives in jobs): it expires when its caller
 * stops waiting, and a broker that restarts meanwhile loses it and its caller answers
 * SERVICE_UNAVAILABLE, as for any request nobody answered. Replies come over RabbitMQ's
 * direct reply-to, which the broker only allows without acks; that is the client's
 * default and needs no setting here.
 */
export function rmqClientOptions(broker: BrokerSettings, service: ServiceName): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: [broker.RABBITMQ_URL],
      queue: queueName(broker.RMQ_QUEUE_PREFIX, service),
      queueOptions: { durable: true },
      persistent: false,
      socketOptions: BROKER_SOCKET_OPTIONS,
    },
  };
}
