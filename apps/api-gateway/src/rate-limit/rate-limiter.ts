import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { FastifyReply } from 'fastify';
import { GatewayConfig } from '../config.js';
import type { ClientRequest } from '../http/client-ip.js';
import { bucketAddress, clientIp } from '../http/client-ip.js';
import { rateLimitRefusals } from './rate-limit.metrics.js';
import { RateLimitStore } from './rate-limit.store.js';
import type { BucketLimit } from './token-bucket.js';

// Users whose last bucket reading this gateway keeps (it forgets them all past this many).
const REMEMBERED_USERS = 10_000;

/**
 * Spends one token of the caller's bucket (spec/decisions.md section 3): the user's, sized by
 * tier, or the client IP's for anyone without a valid token; sets the X-RateLimit headers
 * and refuses an empty bucket with RATE_LIMIT_EXCEEDED and Retry-After.
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
    reply.headers({
      'X-RateLimit-Limit': decision.limit,
      'X-RateLimit-Remaining': decision.remaining,
      'X-RateLimit-Reset': decision.resetSeconds,
    });
    if (!decision.allowed) {
      reply.header('Retry-After', decision.retryAfterSeconds);
      rateLimitRefusals.inc({ bucket: user ? user.tier : 'ip' });
      throw new DomainError(
        'RATE_LIMIT_EXCEEDED',
        `Too many requests; retry in ${decision.retryAfterSeconds} s.`,
      );
    }
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
