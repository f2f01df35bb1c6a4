import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { InMemoryRateLimitStore } from './rate-limit.store.js';
import { RedisRateLimitStore } from './redis-rate-limit.store.js';
import type { BucketDecision } from './token-bucket.js';
import { REFUND } from './token-bucket.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const FREE = { perMinute: 60, burst: 10 };
// Refills one token a minute: nothing refills between two takes of one test.
const SLOW = { perMinute: 1, burst: 10 };
// Generous, so a busy machine never drops a gateway to its own buckets: that would admit
// each gateway's own burst too. The fallback has its own test, with a short timeout.
const REDIS_TIMEOUT_MS = 10_000;

describe('rate-limit buckets in the real Redis', () => {
  const prefix = `pgcloud-test-${randomBytes(4).toString('hex')}`;
  const gatewayA = new RedisRateLimitStore(
    REDIS_URL,
    prefix,
    REDIS_TIMEOUT_MS,
    new InMemoryRateLimitStore(),
  );
  const gatewayB = new RedisRateLimitStore(
    REDIS_URL,
    prefix,
    REDIS_TIMEOUT_MS,
    new InMemoryRateLimitStore(),
  );

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
    let firstAnsweredAt = 0;
    let lastAskedAt = 0;
    let last: BucketDecision | undefined;
    // Three seconds of requests, and on until one leaves the bucket empty, however few
    // requests a busy machine made: every token the bucket held or gained was then taken.
    while (Date.now() - startedAt < 3000 || last?.remaining !== 0) {
      assert.ok(Date.now() - startedAt < 30_000, `the bucket never ran dry (${admitted})`);
      const store = takes % 2 === 0 ? gatewayA : gatewayB;
      lastAskedAt = Date.now();
      last = await store.take('user:shared', FREE);
      if (takes === 0) firstAnsweredAt = Date.now();
      takes += 1;
      if (last.allowed) admitted += 1;
      assert.equal(last.limit, 60);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const elapsedSeconds = (Date.now() - startedAt) / 1000;
    // Redis refilled for no longer than the whole loop and no shorter than from the first
    // answer to the last request.
    const refillSeconds = (lastAskedAt - firstAnsweredAt) / 1000;
    assert.ok(takes > admitted, `some requests were refused (${takes} takes)`);
    assert.ok(
      admitted <= FREE.burst + Math.ceil(elapsedSeconds) + 1,
      `${admitted} admitted in ${elapsedSeconds} s`,
    );
    assert.ok(
      admitted >= FREE.burst + Math.floor(refillSeconds) - 1,
      `the bucket refills (${admitted} admitted in ${refillSeconds} s)`,
    );
  });

  it('tells the same remaining tokens through either gateway', async () => {
    const first = await gatewayA.take('user:counted', SLOW);
    const second = await gatewayB.take('user:counted', SLOW);
    assert.equal(first.remaining, 9);
    assert.equal(second.remaining, 8);
  });

  it('gives a token back on a refund through either gateway, never past the burst', async () => {
    await gatewayA.take('authfail:refunded', SLOW);
    await gatewayA.take('authfail:refunded', SLOW);
    assert.equal((await gatewayB.take('authfail:refunded', SLOW, REFUND)).remaining, 9);
    assert.equal((await gatewayA.take('authfail:refunded', SLOW, REFUND)).remaining, 10);
    assert.equal((await gatewayB.take('authfail:refunded', SLOW, REFUND)).remaining, 10);
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
