import { METRICS_PREFIX } from '@pgcloud/observability';
import { Counter } from 'prom-client';

/** Which bucket refused: a client IP's, or a signed-in user's of their tier. */
export type RefusingBucket = 'ip' | 'free' | 'pro';

/** Requests refused with 429, by the kind of bucket that was empty. */
export const rateLimitRefusals = new Counter({
  name: `${METRICS_PREFIX}rate_limit_refusals_total`,
  help: 'Requests the gateway refused with 429, by bucket: a client IP, its failed authentications, or a user of a tier.',
  labelNames: ['bucket'] as const,
});
