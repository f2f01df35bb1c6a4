import type { OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { sharedRedis } from '../redis/shared-redis.js';
import { IdempotencyStore } from './idempotency.store.js';

// Each operation is one script, so it is atomic across every gateway.
const CLAIM_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])
`;
const REPLACE_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;

/**
 * Idempotency-Keys shared by every gateway through Redis, under `<prefix>:idempotency:`.
 * Unlike rate limits, nothing falls back to memory when Redis does not answer within
 * REDIS_TIMEOUT_MS: a key only one gateway knows would let a retry through another create
 * twice, so the caller refuses (503) instead (idempotency-keys.ts).
 */
export class RedisIdempotencyStore extends IdempotencyStore implements OnApplicationShutdown {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly keyPrefix: string,
    timeoutMs: number,
  ) {
    super();
    this.redis = sharedRedis(url, timeoutMs);
  }

  async claim(slot: string, value: string, ttlMs: number): Promise<string | null> {
    const held = await this.redis.eval(CLAIM_LUA, 1, this.keyOf(slot), value, ttlMs);
    return typeof held === 'string' ? held : null;
  }

  async replace(slot: string, expected: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.eval(REPLACE_LUA, 1, this.keyOf(slot), expected, value, ttlMs);
  }

  async release(slot: string, expected: string): Promise<void> {
    await this.redis.eval(RELEASE_LUA, 1, this.keyOf(slot), expected);
  }

  private keyOf(slot: string): string {
    return `${this.keyPrefix}:idempotency:${slot}`;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
