import type { ArgumentsHost, RpcExceptionFilter } from '@nestjs/common';
import { withRequestId } from '@pgcloud/observability';
import { Catch, Logger } from '@nestjs/common';
import type { Message, WireError } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { Observable } from 'rxjs';
import { throwError } from 'rxjs';

/**
 * The one error filter of a service: a DomainError travels back as its body; anything
 * else is logged with the request id and answered as INTERNAL_ERROR, never with its text.
 */
@Catch()
export class RpcErrorFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger('RpcErrorFilter');

  catch(exception: unknown, host: ArgumentsHost): Observable<WireError> {
    if (exception instanceof DomainError) return throwError(() => exception.toWire());
    const data = host.switchToRpc().getData<Partial<Message<unknown>> | undefined>();
    const requestId = data?.ctx?.requestId;
    const stack = exception instanceof Error ? exception.stack : String(exception);
    withRequestId(requestId, () => this.logger.error(`unexpected error: ${stack}`));
    return throwError(
      () =>
        ({ code: 'INTERNAL_ERROR', message: 'An unexpected error occurred.' }) satisfies WireError,
    );
  }
}
