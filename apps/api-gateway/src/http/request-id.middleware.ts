import { randomUUID } from 'node:crypto';
import type { NextFunction, Response } from 'express';
import type { GatewayRequest } from './request-context.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a well-formed X-Request-Id, or makes one; set before anything else can answer. */
export function requestIdMiddleware(req: GatewayRequest, res: Response, next: NextFunction): void {
  const given = req.header('x-request-id');
  req.requestId = given && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', req.requestId);
  next();
}
