import type { LocalLifetimeDto } from '@pgcloud/contracts';
import { DomainError, LOCAL_MAX_TTL_SECONDS } from '@pgcloud/contracts';

/**
 * The expiry a request asks for (docs/api/local-daemon.md#expiry): from `ttlSeconds`, or
 * `expiresAt` (in the future, at most 30 days ahead), or null for never; undefined when
 * it names none. Both at once is VALIDATION_ERROR.
 */
export function requestedExpiry(body: LocalLifetimeDto, nowMs: number): Date | null | undefined {
  const invalid = (message: string) =>
    new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
      { field: 'expiresAt', message },
    ]);
  if (body.ttlSeconds !== undefined && body.expiresAt !== undefined)
    throw invalid('give expiresAt or ttlSeconds, not both');
  if (body.ttlSeconds !== undefined) return new Date(nowMs + body.ttlSeconds * 1000);
  if (body.expiresAt === undefined || body.expiresAt === null) return body.expiresAt;
  const at = Date.parse(body.expiresAt);
  if (Number.isNaN(at)) throw invalid('expiresAt must be an ISO 8601 timestamp, or null');
  if (at <= nowMs) throw invalid('expiresAt must be in the future');
  if (at > nowMs + LOCAL_MAX_TTL_SECONDS * 1000)
    throw invalid('expiresAt must be at most 30 days ahead');
  return new Date(at);
}
