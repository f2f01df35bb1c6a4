import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { RmqContext } from '@nestjs/microservices';
import type { AppName, Message } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { METRICS_PREFIX, withRequestId } from '@pgcloud/observability';
import { Counter } from 'prom-client';
import type { Observable } from 'rxjs';
import type { HandledPattern } from './handles.decorator.js';
import { HANDLED_PATTERN } from './handles.decorator.js';

/** Messages a service refused for their sender, by pattern and the sender's broker login. */
export const rpcRefused = new Counter({
  name: `${METRICS_PREFIX}rpc_refused_total`,
  help: 'RPC requests refused because their sender may not send the pattern, by pattern and sender.',
  labelNames: ['pattern', 'sender'] as const,
});

/**
 * Answers a message only from the apps its pattern allows. The sender is the broker login
 * in the message's `user-id`, which RabbitMQ refuses to carry unless it is the login of
 * the connection that published it; `users` tells the app of each login (BROKER_USERS).
 * Anything else, no `user-id` included, is refused FORBIDDEN before the message is read
 * any further, logged with the pattern and the sender, and counted.
 */
@Injectable()
export class SenderInterceptor implements NestInterceptor {
  private readonly logger = new Logger(SenderInterceptor.name);
  private readonly reflector = new Reflector();

  constructor(private readonly users: ReadonlyMap<string, AppName>) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const rmq = context.switchToRpc().getContext<RmqContext>();
    const def = this.reflector.get<HandledPattern | undefined>(
      HANDLED_PATTERN,
      context.getHandler(),
    );
    const login = senderOf(rmq.getMessage());
    const app = login === undefined ? undefined : this.users.get(login);
    // A message of no declared pattern is left to MessageValidationInterceptor to refuse.
    if (!def || (app !== undefined && def.senders.includes(app))) return next.handle();
    const pattern = rmq.getPattern();
    const sender = login ?? 'none';
    rpcRefused.inc({ pattern, sender });
    const requestId = context.switchToRpc().getData<Partial<Message<unknown>> | undefined>()
      ?.ctx?.requestId;
    withRequestId(typeof requestId === 'string' ? requestId : undefined, () =>
      this.logger.warn(
        `${pattern} refused: sent by broker login ${sender}` +
          `${app ? ` (${app})` : ''}, which may not send it`,
      ),
    );
    throw new DomainError('FORBIDDEN', `This caller may not send ${pattern}.`);
  }
}

/** The broker login a delivery names in its `user-id`, if any. */
function senderOf(message: unknown): string | undefined {
  const userId = (message as { properties?: { userId?: unknown } } | undefined)?.properties?.userId;
  return typeof userId === 'string' && userId !== '' ? userId : undefined;
}
