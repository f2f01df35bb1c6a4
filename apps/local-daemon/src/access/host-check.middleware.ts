import { DomainError } from '@pgcloud/contracts';
import { sendError } from '@pgcloud/http';
import type { NextFunction, Request, Response } from 'express';
import { isLoopbackHost } from './loopback-host.js';

/**
 * Refuses a request whose Host is not a loopback name before anything else answers
 * (decisions.md section 1): a web page cannot reach the daemon through a DNS name of
 * its own that resolves to 127.0.0.1.
 */
export function hostCheckMiddleware(req: Request, res: Response, next: NextFunction): void {
  if (isLoopbackHost(req.headers.host)) return next();
  sendError(
    res,
    new DomainError(
      'FORBIDDEN_HOST',
      'The local daemon answers only requests for localhost, 127.0.0.1 or [::1].',
    ),
  );
}
