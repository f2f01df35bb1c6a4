import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { GatewayConfig } from '../config.js';

// How long a token auth-service confirmed stays "known valid" for rate limiting, and how
// many this gateway remembers (the oldest go first).
const KNOWN_VALID_MS = 60 * 60 * 1000;
const MAX_ENTRIES = 100_000;

interface Checked {
  user: AuthenticatedUser;
  /** Until then the user is trusted without asking auth-service (the revocation bound). */
  trustedUntilMs: number;
  /** Until then the token counts as known valid: its lookups are not charged to the IP. */
  knownUntilMs: number;
}

/**
 * Tokens auth-service confirmed, under their hash. The user is trusted without asking
 * again for AUTH_CACHE_SECONDS (at most 10, the revocation bound); the token itself stays
 * known valid for an hour, so its holder's requests are charged to the user alone even
 * when they must be looked up again. A refused lookup, or a logout or revocation through
 * this gateway, forgets the token at once.
 */
@Injectable()
export class TokenCache {
  private readonly entries = new Map<string, Checked>();

  constructor(private readonly config: GatewayConfig) {}

  /** The user of a token checked less than AUTH_CACHE_SECONDS ago. */
  get(token: string): AuthenticatedUser | undefined {
    const entry = this.entries.get(hash(token));
    return entry && entry.trustedUntilMs > Date.now() ? entry.user : undefined;
  }

  /** True when auth-service confirmed the token within the last hour. */
  isKnownValid(token: string): boolean {
    const entry = this.entries.get(hash(token));
    return entry !== undefined && entry.knownUntilMs > Date.now();
  }

  set(token: string, user: AuthenticatedUser): void {
    const now = Date.now();
    const key = hash(token);
    this.entries.delete(key); // re-inserted last: the map's order is oldest first
    this.entries.set(key, {
      user,
      trustedUntilMs: now + this.config.AUTH_CACHE_SECONDS * 1000,
      knownUntilMs: now + KNOWN_VALID_MS,
    });
    if (this.entries.size > MAX_ENTRIES) this.prune(now);
  }

  forget(token: string): void {
    this.entries.delete(hash(token));
  }

  forgetTokenId(tokenId: string): void {
    for (const [key, entry] of this.entries)
      if (entry.user.token_id === tokenId) this.entries.delete(key);
  }

  /** Every token of a user (logout of all their tokens). */
  forgetUser(userId: string): void {
    for (const [key, entry] of this.entries) if (entry.user.id === userId) this.entries.delete(key);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries)
      if (entry.knownUntilMs <= now) this.entries.delete(key);
    for (const key of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(key);
    }
  }
}

function hash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
