import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { AUTH_PATTERNS, DomainError } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import type { GatewayRequest } from '../http/request-context.js';
import { contextOf } from '../http/request-context.js';
import { TokenCache } from './token-cache.js';

/** Asks auth-service who holds a token the cache does not vouch for. */
@Injectable()
export class TokenLookup {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cache: TokenCache,
  ) {}

  /**
   * The token's user, or undefined for a token auth-service refuses (revoked elsewhere,
   * expired, never issued). An auth-service that does not answer is an error, never a
   * refusal.
   */
  async userOf(req: GatewayRequest, token: string): Promise<AuthenticatedUser | undefined> {
    try {
      const user = await this.rpc.call(AUTH_PATTERNS.verifyToken, contextOf(req), { token });
      this.cache.set(token, user);
      return user;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'AUTH_REQUIRED') {
        this.cache.forget(token); // revoked elsewhere: its next lookups are the IP's again
        return undefined;
      }
      throw err;
    }
  }
}
