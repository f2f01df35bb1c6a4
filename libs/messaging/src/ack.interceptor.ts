import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import type { RmqContext } from '@nestjs/microservices';
import type { Observable } from 'rxjs';
import { finalize } from 'rxjs';

/**
 * Acknowledges a message once its handler has answered, with a result or an error. A
 * worker that dies before that leaves the message to be delivered again.
 */
@Injectable()
export class AckInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const rmq = context.switchToRpc().getContext<RmqContext>();
    return next.handle().pipe(
      finalize(() => {
        const channel = rmq.getChannelRef() as { ack(message: unknown): void };
        channel.ack(rmq.getMessage());
      }),
    );
  }
}
