import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { map } from 'rxjs';
import { IS_RAW } from './raw-response.js';

/**
 * A JSON answer with another status than its route's: a creating POST's dry run answers
 * 200, not 201 (docs/api/restores.md#plan). The envelope is built around `data` as for any
 * answer.
 */
export class WithStatus<T> {
  constructor(
    readonly status: 200,
    readonly data: T,
  ) {}
}

/**
 * Wraps every JSON answer as `{success: true, data}`; the one place that builds the envelope.
 * A WithStatus answer is sent whole with its own status (as a web Response, whose status
 * Nest sends over the route's).
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const raw = this.reflector.getAllAndOverride<boolean>(IS_RAW, [
      context.getHandler(),
      context.getClass(),
    ]);
    return raw
      ? next.handle()
      : next
          .handle()
          .pipe(
            map((data: unknown) =>
              data instanceof WithStatus ? withStatus(data) : { success: true, data },
            ),
          );
  }
}

/** The envelope around a WithStatus answer's data, as a whole web Response. */
function withStatus(answer: WithStatus<unknown>): Response {
  return new Response(JSON.stringify({ success: true, data: answer.data }), {
    status: answer.status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}
