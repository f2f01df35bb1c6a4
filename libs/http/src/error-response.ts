import type { DomainError, ErrorBody } from '@pgcloud/contracts';
import { httpStatusFor } from '@pgcloud/contracts';
import type { Response } from 'express';

/**
 * Request bodies above this are refused with 413 PAYLOAD_TOO_LARGE (docs/api/errors.md#codes).
 */
export const BODY_LIMIT_BYTES = 64 * 1024;
/** BODY_LIMIT_BYTES as Express's body parsers take it (the local daemon). */
export const BODY_LIMIT = '64kb';

/** The error envelope as it goes over the wire. */
export interface ErrorEnvelope {
  success: false;
  error: ErrorBody;
}

/** An error answer: the HTTP status of its code, its headers and the envelope. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: ErrorEnvelope;
}

/**
 * The answer to `error`: the error envelope with the HTTP status of its code; AUTH_REQUIRED
 * also carries `WWW-Authenticate: Bearer`, an error to ask again later `Retry-After`. The one place that shapes an error answer, for the
 * exception filter and for what answers before routing.
 */
export function errorAnswer(error: DomainError): ErrorAnswer {
  const headers: Record<string, string> = {};
  if (error.code === 'AUTH_REQUIRED') headers['WWW-Authenticate'] = 'Bearer';
  if (error.retryAfterSeconds !== undefined)
    headers['Retry-After'] = String(error.retryAfterSeconds);
  return {
    status: httpStatusFor(error.code),
    headers,
    body: { success: false, error: error.toBody() },
  };
}

/** Writes errorAnswer(error) through Express (middleware that answers before routing). */
export function sendError(res: Response, error: DomainError): void {
  const answer = errorAnswer(error);
  res.set(answer.headers).status(answer.status).json(answer.body);
}
