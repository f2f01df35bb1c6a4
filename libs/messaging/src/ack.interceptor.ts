import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import type { RmqContext } from '@nestjs/microservices';
import type { Observable } from 'rxjs';
import { finalize } from 'rxjs';
import type { Delivery, SettlingChannel } from './message-acks.js';
import { messageAcks } from './message-acks.js';

/**
 * Acknowledges a message once its handler has answered, with a result or an error, in the
 * turn's batch of its channel (MessageAcks). A worker that dies before that leaves the
 * message to be delivered again.
 */
@Injectable()
export class AckInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const rmq = context.switchToRpc().getContext<RmqContext>();
    return next.handle().pipe(
      finalize(() => {
        const channel = rmq.getChannelRef() as SettlingChannel;
        messageAcks(channel).finished(rmq.getMessage() as Delivery);
      }),
    );
  }
}
