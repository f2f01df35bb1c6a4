import type { Tier } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

/** A count that each tier may reach (docs/api/errors.md#codes): configuration. */
export interface TierLimits {
  free: number;
  pro: number;
}

/**
 * Throws QUOTA_EXCEEDED when `used` already reaches the caller's limit; a context without
 * a tier is Free, the default. `what` names the limit ("projects per account"), `remedy`
 * how to make room.
 */
export function assertTierQuota(
  tier: Tier | undefined,
  used: number,
  limits: TierLimits,
  what: string,
  remedy: string,
): void {
  const limit = tier === 'pro' ? limits.pro : limits.free;
  if (used < limit) return;
  throw new DomainError(
    'QUOTA_EXCEEDED',
    `The ${tier === 'pro' ? 'Pro' : 'Free'} tier allows ${limit} ${what}; ${remedy}.`,
  );
}
