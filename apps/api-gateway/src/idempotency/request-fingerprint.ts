import { createHash } from 'node:crypto';
import { DomainError } from '@pgcloud/contracts';
import { MAX_INPUT_DEPTH, nestsDeeperThan } from '@pgcloud/http';

/** What makes two requests the same request: who sends it, to where, with what. */
export interface RequestShape {
  userId: string;
  method: string;
  /** The path as sent, query string included. */
  path: string;
  /** The parsed body; absent is the same as `{}`. */
  body: unknown;
}

/**
 * The body as JSON with the keys of every object sorted, so the same body is the same
 * however a client ordered its keys. Too deep a body is refused as the validation pipe
 * would refuse it, before JSON.stringify's recursion could overflow the stack.
 */
export function canonicalJson(body: unknown): string {
  if (nestsDeeperThan(body, MAX_INPUT_DEPTH))
    throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
      { field: 'body', message: `nests deeper than ${MAX_INPUT_DEPTH} levels` },
    ]);
  return JSON.stringify(body ?? {}, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

/**
 * A SHA-256 of user, method, path and canonical body (docs/api/idempotency.md): an
 * Idempotency-Key sent again with another fingerprint is another request.
 */
export function requestFingerprint(request: RequestShape): string {
  const parts = [request.userId, request.method.toUpperCase(), request.path];
  return createHash('sha256')
    .update(JSON.stringify([...parts, canonicalJson(request.body)]))
    .digest('hex');
}
