import type { Tier } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

const DAY_MS = 86_400_000;
/** How far ahead any database may expire, and a Free one (docs/api/databases.md#expiry). */
export const MAX_EXPIRY_DAYS = 365;
export const FREE_MAX_EXPIRY_DAYS = 30;

/**
 * The moment a request asks a database to expire at, once it is in the future and at most
 * MAX_EXPIRY_DAYS ahead (VALIDATION_ERROR otherwise); null or left out: never.
 */
export function requestedExpiry(value: string | null | undefined, nowMs: number): Date | null {
  if (value === undefined || value === null) return null;
  const at = Date.parse(value);
  const invalid = (message: string) =>
    new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
      { field: 'expires_at', message },
    ]);
  if (Number.isNaN(at)) throw invalid('expires_at must be an ISO 8601 timestamp, or null');
  if (at <= nowMs) throw invalid('expires_at must be in the future');
  if (at > nowMs + MAX_EXPIRY_DAYS * DAY_MS)
    throw invalid(`expires_at must be at most ${MAX_EXPIRY_DAYS} days ahead`);
  return new Date(at);
}

/** QUOTA_EXCEEDED for a Free database asked to live longer than FREE_MAX_EXPIRY_DAYS. */
export function assertExpiryWithinTier(tier: Tier | undefined, at: Date | null, nowMs: number) {
  if (tier === 'pro' || at === null) return;
  if (at.getTime() > nowMs + FREE_MAX_EXPIRY_DAYS * DAY_MS)
    throw new DomainError(
      'QUOTA_EXCEEDED',
      `The Free tier allows an expiry at most ${FREE_MAX_EXPIRY_DAYS} days ahead.`,
    );
}
