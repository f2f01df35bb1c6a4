import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import type { GatewayRequest } from '../http/request-context.js';
import { IS_PUBLIC } from '../http/route-flags.js';
import { RateLimiter } from '../rate-limit/rate-limiter.js';
import { TokenCache } from './token-cache.js';
import { TokenLookup } from './token-lookup.js';

/**
 * Finds out who calls, and nothing more: a missing or bad token leaves the request
 * anonymous, so the rate-limit guard can refuse it after counting it. The token is read
 * from `Authorization: Bearer <token>` only, never from a query string or a body, where
 * URLs and payloads carry it into logs. A token this gateway does not already know to be
 * valid (confirmed by auth-service within the hour, see TokenCache) is first charged to
 * its address's failed-authentication bucket, so a flood of made-up tokens meets 429
 * without costing auth-service a lookup each; a token that turns out valid is refunded,
 * so it never pays an IP bucket, and a signed-in user is never limited by its neighbours'
 * requests (docs/operating.md#before-others-reach-it). An auth-service that does not answer is
 * SERVICE_UNAVAILABLE, never a 401.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    private readonly cache: TokenCache,
    private readonly lookup: TokenLookup,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    req.user = undefined;
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    const authorization = req.headers.authorization;
    if (isPublic || !authorization) return true;
    const token = bearerToken(authorization);
    if (!token) return true;
    // Confirmed within AUTH_CACHE_SECONDS: auth-service would answer this same user.
    const trusted = this.cache.get(token);
    if (trusted) {
      req.user = trusted;
      return true;
    }
    const refund = this.cache.isKnownValid(token)
      ? undefined
      : await this.limiter.chargeLookup(req, context.switchToHttp().getResponse<FastifyReply>());
    req.user = await this.lookup.userOf(req, token);
    if (req.user) await refund?.();
    else req.chargedToIp = refund !== undefined;
    return true;
  }
}

/** The token of an `Authorization: Bearer <token>` header (empty when it is not one). */
function bearerToken(authorization: string): string {
  return /^Bearer +(\S+)$/i.exec(authorization)?.[1] ?? '';
}
