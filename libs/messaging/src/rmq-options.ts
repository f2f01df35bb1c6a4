import { Transport } from '@nestjs/microservices';
import type { RmqOptions } from '@nestjs/microservices';
import type { ServiceName } from '@pgcloud/contracts';
import { SERVICE_QUEUES } from '@pgcloud/contracts';

/** The broker settings a service or a client needs. */
export interface BrokerSettings {
  RABBITMQ_URL: string;
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
 * A service's consumer: a durable queue, persistent replies, a bounded prefetch and
 * explicit acks (AckInterceptor acks once the handler has answered), so a message a
 * crashed worker held is delivered again rather than lost.
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
      persistent: true,
      socketOptions,
    },
  };
}

/**
 * A caller of a service: requests are persistent messages on the service's durable queue.
 * Replies come over RabbitMQ's direct reply-to, which the broker only allows without acks;
 * that is the client's default and needs no setting here.
 */
export function rmqClientOptions(broker: BrokerSettings, service: ServiceName): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: [broker.RABBITMQ_URL],
      queue: queueName(broker.RMQ_QUEUE_PREFIX, service),
      queueOptions: { durable: true },
      persistent: true,
      socketOptions,
    },
  };
}
