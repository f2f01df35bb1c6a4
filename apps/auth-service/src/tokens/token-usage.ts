import { Injectable, Logger } from '@nestjs/common';
import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { AuthServiceConfig } from '../config.js';
import { TokensRepository } from './tokens.repository.js';

/**
 * When each token was last used, kept in memory and written every
 * TOKEN_USAGE_FLUSH_SECONDS in one statement: never a write per request. A lookup that
 * fails to be written is kept for the next round.
 */
@Injectable()
export class TokenUsage implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TokenUsage.name);
  private used = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly tokens: TokensRepository,
    private readonly config: AuthServiceConfig,
  ) {}

  record(tokenId: string, at = new Date()): void {
    this.used.set(tokenId, at);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), this.config.TOKEN_USAGE_FLUSH_SECONDS * 1000);
  }

  /** The last round, before the database connection closes. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Writes what was used since the last round; one round at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.used.size === 0) return;
    const batch = this.used;
    this.used = new Map();
    try {
      await this.tokens.recordLastUse(batch);
    } catch (err) {
      for (const [id, at] of batch) if (!this.used.has(id)) this.used.set(id, at);
      this.logger.warn(`last use of ${batch.size} token(s) not written yet: ${String(err)}`);
    }
  }
}
