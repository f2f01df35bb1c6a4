import { Logger } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import { ClientRMQ, RmqRecordBuilder } from '@nestjs/microservices';
import type { Message, RequestContext, ServiceName } from '@pgcloud/contracts';
import { DomainError, SERVICE_QUEUES, brokerLoginOf, isWireError } from '@pgcloud/contracts';
import { withRequestId } from '@pgcloud/observability';
import { answerDueAt, callTimeoutMs, outOfTime } from './deadline.js';
import type { BrokerSettings } from './rmq-options.js';
import { rmqClientOptions } from './rmq-options.js';
import { TimeoutError, firstValueFrom, timeout } from 'rxjs';
import { rpcTimeouts } from './rpc-metrics.js';

/**
 * Request-response to one service, untyped: apps call through RpcClient, which types each
 * call by its catalogue declaration. Every request carries the caller's context, expires
 * in the broker when nobody waits for it any more, and ends within the timeout, nested in
 * the caller's own (docs/api/errors.md#timeouts): a domain error comes back as DomainError,
 * silence, a broken broker or no time left as SERVICE_UNAVAILABLE.
 */
export class ServiceClient {
  private readonly logger = new Logger(ServiceClient.name);

  constructor(
    private readonly service: string,
    private readonly proxy: Pick<ClientProxy, 'send' | 'connect' | 'close' | 'unwrap'>,
    private readonly timeoutMs: number,
    /** The broker login of the connection: each request names it as its sender. */
    private readonly login: string,
    /** The gateway's clients: they wait all the time a request has left (deadline.ts). */
    private readonly atEdge = false,
  ) {}

  /** A client of one service over the deployment's broker; close() it when done. */
  static connect(
    broker: BrokerSettings,
    service: ServiceName,
    timeoutMs: number,
    options: { atEdge?: boolean } = {},
  ): ServiceClient {
    const proxy = new ClientRMQ(rmqClientOptions(broker, service).options ?? {});
    return new ServiceClient(
      SERVICE_QUEUES[service],
      proxy,
      timeoutMs,
      brokerLoginOf(broker.RABBITMQ_URL),
      options.atEdge,
    );
  }

  /**
   * Sends one request and waits for its answer: at most `timeoutMs`, and never past what
   * the handler sending it has left before its own answer is due (ctx.deadline, see
   * deadline.ts). The message carries when its answer is due, so the service asked can
   * tell when it comes too late to start, and its sender's login as its `user-id`, which
   * the broker checks and the service asked trusts.
   */
  async send(
    pattern: string,
    ctx: RequestContext,
    payload: unknown,
    timeoutMs: number = this.timeoutMs,
  ): Promise<unknown> {
    const now = Date.now();
    const waitMs = callTimeoutMs(timeoutMs, ctx.deadline, now, this.atEdge);
    if (waitMs <= 0) {
      withRequestId(ctx.requestId, () =>
        this.logger.warn(`no time left to ask the ${this.service} ${pattern}`),
      );
      rpcTimeouts.inc({ pattern });
      throw outOfTime();
    }
    const message: Message<unknown> = {
      ctx: { ...ctx, deadline: answerDueAt(waitMs, now) },
      payload,
    };
    const record = new RmqRecordBuilder(message)
      .setOptions({
        expiration: String(waitMs),
        persistent: false,
        userId: this.login,
        headers: { 'x-request-id': ctx.requestId },
      })
      .build();
    try {
      return await firstValueFrom(this.proxy.send(pattern, record).pipe(timeout(waitMs)));
    } catch (err) {
      if (isWireError(err)) throw DomainError.fromWire(err);
      if (err instanceof TimeoutError) rpcTimeouts.inc({ pattern });
      const reason = err instanceof Error ? err.message : String(err);
      withRequestId(ctx.requestId, () =>
        this.logger.warn(`${this.service} did not answer ${pattern}: ${reason}`),
      );
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        `The ${this.service} is not answering; try again shortly.`,
      );
    }
  }

  /**
   * Opens the connection to the broker now rather than on the first request, so readiness
   * reflects it from the start; a failure is left for that request (or the next check).
   */
  connectEarly(): void {
    this.proxy.connect().catch(() => undefined);
  }

  /**
   * True while the connection to the broker is up. With none yet (never opened, or the first
   * attempt failed), starts one, as the next request would, and answers false meanwhile.
   */
  isConnected(): boolean {
    let connection: AmqpConnectionManager;
    try {
      connection = this.proxy.unwrap<AmqpConnectionManager>();
    } catch {
      this.connectEarly();
      return false;
    }
    return connection.isConnected();
  }

  /** Closes the connection to the broker; the process can then exit. */
  async close(): Promise<void> {
    await this.proxy.close();
  }
}
