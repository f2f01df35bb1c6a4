import type { ErrorBody } from '@pgcloud/contracts';
import { DomainError, httpStatusFor } from '@pgcloud/contracts';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { RateLimiter } from './rate-limiter.js';

/**
 * The client IP's bucket for public routes that Nest does not route (the OpenAPI document
 * and /docs, served by @nestjs/swagger straight on Express), where guards never run.
 */
export function ipRateLimitMiddleware(limiter: RateLimiter): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    limiter.spend(req, res, undefined).then(
      () => next(),
      (err: unknown) => {
        if (!(err instanceof DomainError)) return next(err);
        const body: { success: false; error: ErrorBody } = { success: false, error: err.toBody() };
        res.status(httpStatusFor(err.code)).json(body);
      },
    );
  };
}
