import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@pgcloud/contracts';
import type { FastifyReply } from 'fastify';
import type { GatewayRequest } from '../http/request-context.js';
import { IS_PUBLIC } from '../http/route-flags.js';
import { RateLimiter } from './rate-limiter.js';

/**
 * Runs after the bearer guard and keeps the order of docs/api/errors.md#rate-limits: a
 * request without a valid token spends from its IP's bucket (429) before it is
 * refused (401), unless its bad token paid its address's failed-authentication bucket
 * already; a signed-in one spends from its user's bucket, sized by tier, and never from
 * an IP's. A signed-in user's read, far from its limit, spends while it is answered
 * (rate-limit/overlapped-spend.interceptor.ts).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const { user } = req;
    // A body that could not be read is answered (400) by the next guard: its bucket first.
    if (user && req.method === 'GET' && !req.unreadableBody && this.limiter.mayOverlap(user))
      req.deferredSpend = () => this.limiter.spend(req, reply, user);
    else if (user || !req.chargedToIp) await this.limiter.spend(req, reply, user);
    if (!isPublic && !req.user) {
      throw new DomainError(
        'AUTH_REQUIRED',
        'This route needs Authorization: Bearer <access token>.',
      );
    }
    return true;
  }
}
