import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import type { FastifyReply } from 'fastify';
import type { Observable } from 'rxjs';
import { lastValueFrom, of } from 'rxjs';
import type { GatewayRequest } from '../http/request-context.js';
import { IdempotencyKeys } from './idempotency-keys.js';
import { REPLAYED_HEADER, idempotencyKeyOf } from './idempotency-key.js';
import { requestFingerprint } from './request-fingerprint.js';

/**
 * Honours the Idempotency-Key of a creating POST (idempotent.decorator.ts). It runs after
 * authentication and rate limits, and around validation and the handler, so a replay goes
 * through the envelope and the exception filter as the first answer did: the same status,
 * the same body, plus `Idempotent-Replayed: true`. A request without the header is
 * untouched, and so is a dry run (`?dry_run=true`): it creates nothing to repeat.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly keys: IdempotencyKeys) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    const key = idempotencyKeyOf(req.raw);
    if (
      key === undefined ||
      !req.user ||
      (req.query as Record<string, unknown>)['dry_run'] === 'true'
    )
      return next.handle();
    const fingerprint = requestFingerprint({
      userId: req.user.id,
      method: req.method,
      path: req.originalUrl,
      body: req.body,
    });
    const claimed = await this.keys.claim(req.requestId, req.user.id, key, fingerprint);
    if (claimed.kind === 'replay') {
      context.switchToHttp().getResponse<FastifyReply>().header(REPLAYED_HEADER, 'true');
      const { answer } = claimed;
      if ('error' in answer)
        throw new DomainError(answer.error.code, answer.error.message, answer.error.details);
      return of(answer.data);
    }
    try {
      const data: unknown = await lastValueFrom(next.handle());
      await this.keys.answered(claimed, data);
      return of(data);
    } catch (err) {
      await this.keys.failed(claimed, err);
      throw err;
    }
  }
}
