import type { DomainError, ErrorBody } from '@pgcloud/contracts';
import { httpStatusFor } from '@pgcloud/contracts';
import type { Response } from 'express';

/**
 * Request bodies above this are refused with 413 PAYLOAD_TOO_LARGE (spec/decisions.md
 * section 1).
 */
export const BODY_LIMIT = '64kb';

/** The error envelope as it goes over the wire. */
export interface ErrorEnvelope {
  success: false;
  error: ErrorBody;
}

/**
 * Answers with the error envelope and the HTTP status of its code; AUTH_REQUIRED also
 * carries `WWW-Authenticate: Bearer`. The one place that writes an error answer, for the
 * exception filter and for middleware that answers before routing.
 */
export function sendError(res: Response, error: DomainError): void {
  if (error.code === 'AUTH_REQUIRED') res.setHeader('WWW-Authenticate', 'Bearer');
  const body: ErrorEnvelope = { success: false, error: error.toBody() };
  res.status(httpStatusFor(error.code)).json(body);
}
