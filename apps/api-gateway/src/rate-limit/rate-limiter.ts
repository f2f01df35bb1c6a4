import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { FastifyReply } from 'fastify';
import { GatewayConfig } from '../config.js';
import type { ClientRequest } from '../http/client-ip.js';
import { bucketAddress, clientIp } from '../http/client-ip.js';
import { rateLimitRefusals } from './rate-limit.metrics.js';
import { RateLimitStore } from './rate-limit.store.js';
import type { BucketDecision, BucketLimit } from './token-bucket.js';
import { REFUND } from './token-bucket.js';

// Users whose last bucket reading this gateway keeps (it forgets them all past this many).
const REMEMBERED_USERS = 10_000;

/**
 * Spends one token of the caller's bucket (docs/operating.md#before-others-reach-it): the user's,
 * sized by tier, or the client IP's for anyone without a valid token; sets the X-RateLimit headers
 * and refuses an empty bucket with RATE_LIMIT_EXCEEDED and Retry-After. Tokens the gateway does not
 * know yet pay into a bucket of their own per address, the failed authentications', which a valid
 * one is refunded.
 */
@Injectable()
export class RateLimiter {
  /** Each user's tokens left as the last spend on this gateway found them. */
  private readonly lastRemaining = new Map<string, number>();

  constructor(
    private readonly store: RateLimitStore,
    private readonly config: GatewayConfig,
  ) {}

  async spend(
    req: ClientRequest,
    reply: FastifyReply,
    user: AuthenticatedUser | undefined,
  ): Promise<void> {
    const [key, limit] = user
      ? [`user:${user.id}`, this.tierLimit(user.tier)]
      : [`ip:${bucketAddress(clientIp(req, this.config.TRUST_PROXY))}`, this.ipLimit()];
    const decision = await this.store.take(key, limit);
    if (user) this.remember(user.id, decision.remaining);
    answer(reply, decision, user ? user.tier : 'ip');
  }

  /**
   * Before a token the gateway does not know is looked up: takes one from its address's
   * failed-authentication bucket, refusing the request (429) when it is empty, so a flood
   * of made-up tokens, however many at once, costs auth-service no more than the burst.
   * Answers the refund for a token that turns out valid: it never pays an IP bucket.
   */
  async chargeLookup(req: ClientRequest, reply: FastifyReply): Promise<() => Promise<void>> {
    const key = `authfail:${bucketAddress(clientIp(req, this.config.TRUST_PROXY))}`;
    const decision = await this.store.take(key, this.ipLimit());
    if (!decision.allowed) answer(reply, decision, 'auth-failures');
    return async () => {
      await this.store.take(key, this.ipLimit(), REFUND);
    };
  }

  /**
   * Whether a read of this user's may be answered while its token is being spent, rather
   * than after (rate-limit/overlapped-spend.interceptor.ts): only while the last spend here
   * left at least half the burst, so the refusal it may still meet is rare, and a user at
   * their limit waits for the bucket before any work is done for them.
   */
  mayOverlap(user: AuthenticatedUser): boolean {
    const remaining = this.lastRemaining.get(user.id);
    return remaining !== undefined && remaining * 2 >= this.tierLimit(user.tier).burst;
  }

  private remember(userId: string, remaining: number): void {
    if (this.lastRemaining.size >= REMEMBERED_USERS && !this.lastRemaining.has(userId))
      this.lastRemaining.clear();
    this.lastRemaining.set(userId, remaining);
  }

  private ipLimit(): BucketLimit {
    return {
      perMinute: this.config.RATE_LIMIT_IP_PER_MINUTE,
      burst: this.config.RATE_LIMIT_IP_BURST,
    };
  }

  private tierLimit(tier: 'free' | 'pro'): BucketLimit {
    return tier === 'pro'
      ? {
          perMinute: this.config.RATE_LIMIT_PRO_PER_MINUTE,
          burst: this.config.RATE_LIMIT_PRO_BURST,
        }
      : {
          perMinute: this.config.RATE_LIMIT_FREE_PER_MINUTE,
          burst: this.config.RATE_LIMIT_FREE_BURST,
        };
  }
}

/** Sets the X-RateLimit headers of a decision; refuses an empty bucket (429, Retry-After). */
function answer(reply: FastifyReply, decision: BucketDecision, bucket: string): void {
  reply.headers({
    'X-RateLimit-Limit': decision.limit,
    'X-RateLimit-Remaining': decision.remaining,
    'X-RateLimit-Reset': decision.resetSeconds,
  });
  if (decision.allowed) return;
  reply.header('Retry-After', decision.retryAfterSeconds);
  rateLimitRefusals.inc({ bucket });
  throw new DomainError(
    'RATE_LIMIT_EXCEEDED',
    `Too many requests; retry in ${decision.retryAfterSeconds} s.`,
  );
}
