import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { from, lastValueFrom } from 'rxjs';
import type { GatewayRequest } from '../http/request-context.js';

/**
 * A signed-in user's read, far from its limit (RateLimiter.mayOverlap), spends its token
 * in the shared bucket while the services answer it, instead of before: the round trip to
 * Redis no longer adds to the read's time. What the client gets is what the guard would
 * have answered: nothing is answered before the bucket has, and a refusal (429, with its
 * headers) wins over the read's answer or its error, which are dropped. A read has no
 * effect to undo; what a refused one costs is its work in the services.
 */
@Injectable()
export class OverlappedSpendInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spend = context.switchToHttp().getRequest<GatewayRequest>().deferredSpend;
    return spend ? from(answerOnceSpent(spend(), next.handle())) : next.handle();
  }
}

/** The answer, or its error, once the bucket took the token; the bucket's refusal first. */
export async function answerOnceSpent(
  spent: Promise<void>,
  answer: Observable<unknown>,
): Promise<unknown> {
  const outcome = lastValueFrom(answer, { defaultValue: undefined }).then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await spent;
  const settled = await outcome;
  if ('error' in settled) throw settled.error;
  return settled.value;
}
