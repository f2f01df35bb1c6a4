import { DomainError } from '@pgcloud/contracts';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { sendError } from './error-response.js';

// The names a browser on this machine uses for a server on loopback. A page elsewhere that
// makes a browser resolve its own name to 127.0.0.1 (DNS rebinding) still sends that name.
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The name of a Host header without its port, lowercased; undefined when malformed. */
export function hostName(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  const match = /^(\[[^\]]*\]|[^:@]*)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  if (!match || !match[1]) return undefined;
  if (match[2] !== undefined && Number(match[2]) > 65535) return undefined;
  return match[1];
}

/** True when a Host header names this machine's loopback, with or without a port. */
export function isLoopbackHost(host: string | undefined): boolean {
  return LOOPBACK_NAMES.has(hostName(host) ?? '');
}

/**
 * What refuses, before anything else answers (docs/api/errors.md#the-edge), a
 * request whose Host is not a loopback name or one of `names` (lowercase, without ports):
 * the error for such a Host, undefined for one that may pass.
 */
export function hostRefusal(
  names: Iterable<string>,
  message: string,
): (host: string | undefined) => DomainError | undefined {
  const allowed = new Set([...LOOPBACK_NAMES, ...names]);
  return (host) =>
    allowed.has(hostName(host) ?? '') ? undefined : new DomainError('FORBIDDEN_HOST', message);
}

/** hostRefusal as Express middleware (the local daemon). */
export function hostCheck(names: Iterable<string>, message: string): RequestHandler {
  const refusal = hostRefusal(names, message);
  return (req: Request, res: Response, next: NextFunction) => {
    const error = refusal(req.headers.host);
    if (error) sendError(res, error);
    else next();
  };
}
