import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { unreadableBody } from '@pgcloud/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { GatewayRequest } from './request-context.js';

/**
 * A body parser whose "not valid JSON" is only noted on the request, so it is answered in
 * spec/decisions.md section 1's order: after the rate limit and authentication (401), as a
 * validation error (400). Its other errors (413 above all, which comes first) stand.
 */
export function parsingLater(parser: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    parser(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type !== 'entity.parse.failed') return next(err);
      (req as GatewayRequest).unreadableBody = true;
      next();
    });
  };
}

/** Runs after the bearer and rate-limit guards: answers a body the parser could not read. */
@Injectable()
export class UnreadableBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest<GatewayRequest>().unreadableBody) throw unreadableBody();
    return true;
  }
}
