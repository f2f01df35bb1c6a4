import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { withRequestId } from '@pgcloud/observability';
import type { NextFunction, Request, Response } from 'express';

/** What an HTTP request carries once its request id is known, on any HTTP server. */
export interface HasRequestId {
  requestId: string;
  method: string;
  url?: string;
}

/** A request once requestIdMiddleware has seen it. */
export interface RequestWithId extends Request {
  requestId: string;
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const accessLog = new Logger('HTTP');

/** The request id of a request: its well-formed X-Request-Id, or a new one. */
export function requestIdFor(given: string | string[] | undefined): string {
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The path of a request URL, without its query string (which stays out of logs). */
export function pathOf(url: string | undefined): string {
  const path = url ?? '/';
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/** Logs an answered request once, with its id: method, path, status and time taken. */
export function logAnswered(req: HasRequestId, status: number, ms: number): void {
  if (!Logger.isLevelEnabled('log')) return; // LOG_LEVEL warn or error: not written anyway
  withRequestId(req.requestId, () =>
    accessLog.log(`${req.method} ${pathOf(req.url)} ${status} ${ms.toFixed(1)} ms`),
  );
}

/**
 * Express's way in (the local daemon): echoes a well-formed X-Request-Id, or makes one,
 * before anything else can answer; and logs each request once answered. The rest of the
 * request is handled as part of it, so every line logged meanwhile carries its id.
 */
export function requestIdMiddleware(req: RequestWithId, res: Response, next: NextFunction): void {
  req.requestId = requestIdFor(req.headers['x-request-id']);
  res.setHeader('X-Request-Id', req.requestId);
  const startedAt = process.hrtime.bigint();
  res.once('finish', () =>
    logAnswered(
      { requestId: req.requestId, method: req.method, url: req.originalUrl },
      res.statusCode,
      Number(process.hrtime.bigint() - startedAt) / 1e6,
    ),
  );
  withRequestId(req.requestId, next);
}
