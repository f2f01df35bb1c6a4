import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { AUTH_PATTERNS, DomainError } from '@pgcloud/contracts';
import { Strategy } from 'passport-http-bearer';
import { RpcClient } from '@pgcloud/messaging';
import type { GatewayRequest } from '../http/request-context.js';
import { contextOf } from '../http/request-context.js';
import { TokenCache } from './token-cache.js';

/** passport-http-bearer asking auth-service who holds the token. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cache: TokenCache,
  ) {
    super({ passReqToCallback: true });
  }

  async validate(req: GatewayRequest, token: string): Promise<AuthenticatedUser | false> {
    const cached = this.cache.get(token);
    if (cached) return cached;
    try {
      const user = await this.rpc.call(AUTH_PATTERNS.verifyToken, contextOf(req), { token });
      this.cache.set(token, user);
      return user;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'AUTH_REQUIRED') {
        this.cache.forget(token); // revoked elsewhere: its next lookups are the IP's again
        return false;
      }
      throw err;
    }
  }
}
