import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@pgcloud/contracts';
import type { Response } from 'express';
import { GatewayConfig } from '../config.js';
import type { GatewayRequest } from '../http/request-context.js';
import { clientIp } from '../http/request-context.js';
import { IS_PUBLIC } from '../http/route-flags.js';
import { RateLimitStore } from './rate-limit.store.js';
import type { BucketLimit } from './token-bucket.js';

/**
 * Runs after the bearer guard and keeps decisions.md's order: a request without a valid
 * token spends from its IP's bucket (429) before it is refused (401); a signed-in one
 * spends from its user's bucket, sized by tier.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly store: RateLimitStore,
    private readonly config: GatewayConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    const user = req.user;
    const [key, limit] = user
      ? [`user:${user.id}`, this.tierLimit(user.tier)]
      : [
          `ip:${clientIp(req, this.config.TRUST_PROXY)}`,
          {
            perMinute: this.config.RATE_LIMIT_IP_PER_MINUTE,
            burst: this.config.RATE_LIMIT_IP_BURST,
          },
        ];
    const decision = await this.store.take(key, limit);
    res.setHeader('X-RateLimit-Limit', decision.limit);
    res.setHeader('X-RateLimit-Remaining', decision.remaining);
    res.setHeader('X-RateLimit-Reset', decision.resetSeconds);
    if (!decision.allowed) {
      res.setHeader('Retry-After', decision.retryAfterSeconds);
      throw new DomainError(
        'RATE_LIMIT_EXCEEDED',
        `Too many requests; retry in ${decision.retryAfterSeconds} s.`,
      );
    }
    if (!isPublic && !user) {
      throw new DomainError(
        'AUTH_REQUIRED',
        'This route needs Authorization: Bearer <access token>.',
      );
    }
    return true;
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
