import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { map } from 'rxjs';
import { IS_RAW } from './raw-response.js';

/** Wraps every JSON answer as `{success: true, data}`; the one place that builds the envelope. */
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
      : next.handle().pipe(map((data: unknown) => ({ success: true, data })));
  }
}
