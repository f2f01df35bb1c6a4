import type { OnApplicationShutdown } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { sharedRedis } from '../redis/shared-redis.js';
import type { InMemoryRateLimitStore } from './rate-limit.store.js';
import { RateLimitStore } from './rate-limit.store.js';
import type { BucketDecision, BucketLimit, REFUND } from './token-bucket.js';
import { decide } from './token-bucket.js';

/**
 * The token bucket of token-bucket.ts as one Lua script (a take, or a refund when the cost
 * is negative), so it is atomic across every gateway; Redis's own clock is the only clock, so gateways' clocks need not agree.
 */
const TAKE_TOKEN_LUA = `
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local rate_per_ms = tonumber(ARGV[1]) / 60000
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate_per_ms)
local allowed = 0
if cost < 0 then
  tokens = math.min(burst, tokens - cost)
  allowed = 1
elseif tokens >= 1 then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate_per_ms) + 1000)
return { allowed, tostring(tokens) }
`;

/** How long a gateway limits on its own before it asks Redis again. */
const REDIS_RETRY_AFTER_MS = 2000;

type TakeTokenCommand = (
  key: string,
  perMinute: number,
  burst: number,
  cost: number,
) => Promise<[number, string]>;

/**
 * Buckets shared by every gateway through Redis. When Redis does not answer within
 * REDIS_TIMEOUT_MS, this gateway falls back to its own buckets and says so in the log:
 * requests stay limited (per gateway) rather than refused or left waiting.
 */
export class RedisRateLimitStore extends RateLimitStore implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisRateLimitStore.name);
  private readonly redis: Redis;
  /** While Redis is away: when to try it again (until then, no request waits for it). */
  private retryRedisAtMs: number | null = null;

  constructor(
    url: string,
    private readonly keyPrefix: string,
    timeoutMs: number,
    private readonly fallback: InMemoryRateLimitStore,
  ) {
    super();
    this.redis = sharedRedis(url, timeoutMs); // an outage is reported once by take()
    this.redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
  }

  async take(
    key: string,
    limit: BucketLimit,
    cost: 1 | typeof REFUND = 1,
  ): Promise<BucketDecision> {
    if (this.retryRedisAtMs !== null && Date.now() < this.retryRedisAtMs) {
      return this.fallback.take(key, limit, cost);
    }
    try {
      const [allowed, tokens] = await this.takeToken(
        `${this.keyPrefix}:ratelimit:${key}`,
        limit.perMinute,
        limit.burst,
        cost,
      );
      if (this.retryRedisAtMs !== null)
        this.logger.log('Redis answers again; buckets are shared again');
      this.retryRedisAtMs = null;
      return decide(allowed === 1, Number(tokens), limit);
    } catch (err) {
      if (this.retryRedisAtMs === null) {
        this.logger.warn(`Redis did not answer (${String(err)}); using this gateway's own buckets`);
      }
      this.retryRedisAtMs = Date.now() + REDIS_RETRY_AFTER_MS;
      return this.fallback.take(key, limit, cost);
    }
  }

  private takeToken(
    key: string,
    perMinute: number,
    burst: number,
    cost: number,
  ): Promise<[number, string]> {
    const command = (this.redis as unknown as { takeToken: TakeTokenCommand }).takeToken;
    return command.call(this.redis, key, perMinute, burst, cost);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
