import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { GatewayConfig } from '../config.js';

/**
 * Checked tokens, kept for AUTH_CACHE_SECONDS (at most 10, the revocation bound) under
 * their hash; a logout through this gateway forgets its token at once.
 */
@Injectable()
export class TokenCache {
  private readonly entries = new Map<string, { user: AuthenticatedUser; expiresAtMs: number }>();

  constructor(private readonly config: GatewayConfig) {}

  get(token: string): AuthenticatedUser | undefined {
    const key = hash(token);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs > Date.now()) return entry.user;
    this.entries.delete(key);
    return undefined;
  }

  set(token: string, user: AuthenticatedUser): void {
    if (this.config.AUTH_CACHE_SECONDS === 0) return;
    const now = Date.now();
    if (this.entries.size > 10_000)
      for (const [key, e] of this.entries) if (e.expiresAtMs <= now) this.entries.delete(key);
    this.entries.set(hash(token), {
      user,
      expiresAtMs: now + this.config.AUTH_CACHE_SECONDS * 1000,
    });
  }

  forgetTokenId(tokenId: string): void {
    for (const [key, entry] of this.entries)
      if (entry.user.token_id === tokenId) this.entries.delete(key);
  }
}

function hash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
