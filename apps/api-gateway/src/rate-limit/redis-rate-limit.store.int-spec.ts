import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { InMemoryRateLimitStore } from './rate-limit.store.js';
import { RedisRateLimitStore } from './redis-rate-limit.store.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const FREE = { perMinute: 60, burst: 10 };

describe('rate-limit buckets in the real Redis', () => {
  const prefix = `pgcloud-test-${randomBytes(4).toString('hex')}`;
  const gatewayA = new RedisRateLimitStore(REDIS_URL, prefix, 1000, new InMemoryRateLimitStore());
  const gatewayB = new RedisRateLimitStore(REDIS_URL, prefix, 1000, new InMemoryRateLimitStore());

  after(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await gatewayA.onApplicationShutdown();
    await gatewayB.onApplicationShutdown();
  });

  it('shares one bucket between two gateways: at most burst + rate x elapsed', async () => {
    const startedAt = Date.now();
    let admitted = 0;
    let takes = 0;
    while (Date.now() - startedAt < 3000) {
      const store = takes % 2 === 0 ? gatewayA : gatewayB;
      const decision = await store.take('user:shared', FREE);
      takes += 1;
      if (decision.allowed) admitted += 1;
      assert.equal(decision.limit, 60);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const elapsedSeconds = (Date.now() - startedAt) / 1000;
    assert.ok(takes > 60, `enough requests to exhaust the bucket (${takes})`);
    assert.ok(
      admitted <= FREE.burst + Math.ceil(elapsedSeconds) + 1,
      `${admitted} admitted in ${elapsedSeconds} s`,
    );
    assert.ok(
      admitted >= FREE.burst + Math.floor(elapsedSeconds) - 1,
      `the bucket refills (${admitted})`,
    );
  });

  it('tells the same remaining tokens through either gateway', async () => {
    const first = await gatewayA.take('user:counted', FREE);
    const second = await gatewayB.take('user:counted', FREE);
    assert.equal(first.remaining, 9);
    assert.equal(second.remaining, 8);
  });

  it("falls back to the gateway's own buckets when Redis does not answer", async () => {
    const unreachable = new RedisRateLimitStore(
      'redis://127.0.0.1:1',
      prefix,
      200,
      new InMemoryRateLimitStore(),
    );
    const startedAt = Date.now();
    let admitted = 0;
    for (let i = 0; i < 20; i++) {
      const takeStartedAt = Date.now();
      if ((await unreachable.take('user:offline', FREE)).allowed) admitted += 1;
      assert.ok(Date.now() - takeStartedAt < 1000, 'no request waits long for Redis');
    }
    const elapsedSeconds = (Date.now() - startedAt) / 1000;
    assert.ok(admitted >= FREE.burst, `the burst passes (${admitted})`);
    assert.ok(
      admitted <= FREE.burst + Math.ceil(elapsedSeconds) + 1,
      `still limited: ${admitted} admitted in ${elapsedSeconds} s`,
    );
    await unreachable.onApplicationShutdown();
  });
});
