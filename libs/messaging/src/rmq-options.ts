import { Transport } from '@nestjs/microservices';
import type { RmqOptions } from '@nestjs/microservices';
import type { ServiceName } from '@pgcloud/contracts';
import { SERVICE_QUEUES } from '@pgcloud/contracts';

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

// amqplib buffers small frames for 40 ms without TCP_NODELAY (Nagle): every RPC would pay it.
const socketOptions = {
  connectionOptions: { noDelay: true },
  heartbeatIntervalInSeconds: 5,
  reconnectTimeInSeconds: 1,
};

/**
 * A service's consumer: a durable queue, a bounded prefetch and explicit acks
 * (AckInterceptor acks once the handler has answered), so a message a crashed worker held
 * is delivered again rather than lost. Replies are transient: only their caller, waiting
 * right now, wants them, and nothing of them is worth a write to the broker's disk.
 */
export function rmqServerOptions(broker: BrokerSettings, service: ServiceName): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: [broker.RABBITMQ_URL],
      queue: queueName(broker.RMQ_QUEUE_PREFIX, service),
      queueOptions: { durable: true },
      noAck: false,
      prefetchCount: broker.RMQ_PREFETCH,
      persistent: false,
      socketOptions,
    },
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
      socketOptions,
    },
  };
}
