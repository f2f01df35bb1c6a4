import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable, Logger } from '@nestjs/common';
import type { RmqContext } from '@nestjs/microservices';
import type { Message } from '@pgcloud/contracts';
import type { Observable } from 'rxjs';
import { throwError } from 'rxjs';
import { withRequestId } from '@pgcloud/observability';
import { isPastDeadline, outOfTime } from './deadline.js';

/**
 * Refuses a request that arrives after its answer was due (docs/api/errors.md#timeouts): its
 * caller answers 503, so starting the work would do what was reported as not done. The
 * broker drops a message that waits in the queue past its expiration, but not one already
 * handed to this service (up to RMQ_PREFETCH wait here). Events carry no deadline and
 * always run.
 */
@Injectable()
export class DeadlineInterceptor implements NestInterceptor {
  private readonly logger = new Logger(DeadlineInterceptor.name);

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const ctx = context.switchToRpc().getData<Partial<Message<unknown>> | undefined>()?.ctx;
    const now = Date.now();
    if (ctx?.deadline === undefined || !isPastDeadline(ctx.deadline, now)) return next.handle();
    const pattern = context.switchToRpc().getContext<RmqContext>().getPattern();
    const lateMs = now - ctx.deadline;
    withRequestId(ctx.requestId, () =>
      this.logger.warn(`${pattern} arrived ${lateMs} ms after its answer was due; not started`),
    );
    return throwError(outOfTime);
  }
}
