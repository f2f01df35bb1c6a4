import { Logger } from '@nestjs/common';
import type { CustomTransportStrategy } from '@nestjs/microservices';
import { RmqContext, Server, Transport } from '@nestjs/microservices';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import { connectionCheck } from '@pgcloud/observability';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import { connect } from 'amqp-connection-manager';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { Observable } from 'rxjs';
import { MessageAcks } from './message-acks.js';
import { BROKER_SOCKET_OPTIONS } from './rmq-options.js';

/** Where and how a service consumes its requests. */
export interface BrokerServerOptions {
  /** The broker; its login is the service's. */
  url: string;
  /** The service's durable queue. */
  queue: string;
  /** Requests handed to this process at once, unacknowledged (RMQ_PREFETCH). */
  prefetch: number;
  /** How long a stopping service waits for the requests it holds to be answered. */
  drainMs?: number;
}

/** The connection's events, as amqp-connection-manager emits them. */
type ConnectionEvents = Record<string, (...args: never[]) => void>;

/** What a caller sends: Nest's RMQ client writes requests in this shape. */
interface RequestPacket {
  pattern?: unknown;
  data?: unknown;
  id?: unknown;
}

/** What goes back: Nest's RMQ client reads answers in this shape. */
interface ReplyPacket {
  response?: unknown;
  err?: unknown;
  isDisposed?: boolean;
}

/** How long a stopping service waits, by default, for the answers it owes. */
const DEFAULT_DRAIN_MS = 10_000;

/** What Nest's RMQ client is told when no handler takes its pattern. */
const NO_HANDLER = 'There is no matching message handler defined in the remote service.';

/**
 * pgcloud's RabbitMQ transport for a service (docs/architecture.md#the-broker-transport): it consumes
 * the service's durable queue with a bounded prefetch, hands each request to the handler of
 * its pattern, answers on the caller's reply-to, and acknowledges the request only once it
 * has answered, so a request a crashed worker held is delivered again. It speaks the wire
 * format of Nest's RMQ client, which the callers use.
 *
 * - Acks go in batches, per turn of the event loop (MessageAcks).
 * - Answers go on a channel without publisher confirms: only their caller, waiting right
 *   now, wants them, and a confirm would cost the broker as much as the answer.
 * - A stop cancels the consumer, waits up to `drainMs` for the requests it holds to be
 *   answered, sends their acks, then closes: nothing it answered is delivered again, and
 *   anything it did not answer is.
 * - Its connection's state is part of the service's readiness.
 */
export class BrokerServer
  extends Server<ConnectionEvents>
  implements CustomTransportStrategy, ReadinessSource
{
  override readonly transportId = Transport.RMQ;
  protected override logger = new Logger(BrokerServer.name);
  private connection: AmqpConnectionManager | null = null;
  private channel: ChannelWrapper | null = null;
  /** The consumer on the current channel, and its acks. */
  private consumer: { channel: Channel; tag: string; acks: MessageAcks } | null = null;
  /** Requests being handled, settled once answered. */
  private readonly handling = new Set<Promise<void>>();
  private stopping = false;

  constructor(private readonly options: BrokerServerOptions) {
    super();
  }

  listen(callback: (error?: unknown) => void): void {
    const connection = connect([this.options.url], BROKER_SOCKET_OPTIONS);
    this.connection = connection;
    connection.on('disconnect', ({ err }) =>
      this.logger.error(`lost the broker: ${err.message}; connecting again`),
    );
    connection.on('blocked', ({ reason }) => this.logger.warn(`the broker blocks: ${reason}`));
    let started = false;
    this.channel = connection.createChannel({
      confirm: false,
      setup: async (channel: Channel) => {
        await this.consume(channel);
        if (!started) {
          started = true;
          callback();
        }
      },
    });
  }

  /** The connection the service consumes its queue on is up (/readyz). */
  readinessChecks(): ReadinessCheck[] {
    return [connectionCheck('broker-consumer', () => this.connection?.isConnected() ?? false)];
  }

  async close(): Promise<void> {
    this.stopping = true;
    const consumer = this.consumer;
    if (consumer) {
      await consumer.channel.cancel(consumer.tag).catch(() => undefined);
      await this.drained();
      consumer.acks.flush();
    }
    await this.channel?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
    this.consumer = null;
    this.channel = null;
    this.connection = null;
  }

  /** Listens to the connection's events (connect, disconnect, blocked, ...). */
  on<Event extends string, Callback extends ConnectionEvents[Event]>(
    event: Event,
    callback: Callback,
  ): void {
    this.connection?.on(event, callback as unknown as (...args: unknown[]) => void);
  }

  unwrap<T>(): T {
    if (!this.connection) throw new Error('the broker server is not listening');
    return this.connection as T;
  }

  /** Declares the queue and consumes it; run again on each new channel after a reconnect. */
  private async consume(channel: Channel): Promise<void> {
    await channel.assertQueue(this.options.queue, { durable: true });
    await channel.prefetch(this.options.prefetch);
    const acks = new MessageAcks(channel);
    const { consumerTag } = await channel.consume(
      this.options.queue,
      (message) => {
        if (message) this.receive(message, channel, acks);
      },
      { noAck: false },
    );
    this.consumer = { channel, tag: consumerTag, acks };
  }

  private receive(message: ConsumeMessage, channel: Channel, acks: MessageAcks): void {
    // Stopping: left unacknowledged, the broker gives it to another worker at the close.
    if (this.stopping) return;
    acks.delivered(message);
    const handled = this.answer(message, channel)
      .catch((err: unknown) => this.logger.error(err))
      .finally(() => {
        acks.finished(message);
        this.handling.delete(handled);
      });
    this.handling.add(handled);
  }

  /** Runs the request's handler and sends its answer; settles once the answer is sent. */
  private async answer(message: ConsumeMessage, channel: Channel): Promise<void> {
    const { replyTo, correlationId } = message.properties as {
      replyTo?: string;
      correlationId?: string;
    };
    const packet = parsePacket(message.content);
    const pattern = typeof packet.pattern === 'string' ? packet.pattern : '';
    const reply = (answer: ReplyPacket): void => {
      if (!replyTo) return;
      try {
        channel.sendToQueue(replyTo, Buffer.from(JSON.stringify(answer)), { correlationId });
      } catch (err) {
        // The channel closed under the handler: its caller times out, as for any silence.
        const reason = err instanceof Error ? err.message : String(err);
        this.logger.warn(`could not answer ${pattern}: ${reason}`);
      }
    };
    const handler = this.messageHandlers.get(pattern);
    if (!handler || packet.id === undefined || handler.isEventHandler) {
      this.logger.warn(`no handler answers "${pattern}"; refused`);
      reply({ err: NO_HANDLER, isDisposed: true });
      return;
    }
    const context = new RmqContext([message, channel, pattern]);
    let answers: Observable<unknown>;
    try {
      answers = this.transformToObservable(await handler(packet.data, context));
    } catch (err) {
      reply({ err, isDisposed: true });
      return;
    }
    // Nest's send() turns the handler's answer, or its error, into packets, the last disposed.
    await new Promise<void>((resolve) => {
      this.send(answers, (answer: ReplyPacket) => {
        reply(answer);
        if (answer.isDisposed) resolve();
      });
    });
  }

  /** Every request held is answered, or `drainMs` passed. */
  private async drained(): Promise<void> {
    if (this.handling.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.drainMs ?? DEFAULT_DRAIN_MS);
    });
    await Promise.race([Promise.allSettled([...this.handling]), limit]);
    clearTimeout(timer);
  }
}

/** A request's body; anything unreadable is a request of no pattern, refused. */
function parsePacket(content: Buffer): RequestPacket {
  try {
    const packet: unknown = JSON.parse(content.toString());
    return packet !== null && typeof packet === 'object' ? packet : {};
  } catch {
    return {};
  }
}
