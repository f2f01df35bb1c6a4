import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { eventually } from '@pgcloud/testing';
import { Redis } from 'ioredis';
import { RedisIdempotencyStore } from './redis-idempotency.store.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
// Generous: these tests are about what Redis holds, not how fast it answers.
const REDIS_TIMEOUT_MS = 10_000;
const HOUR_MS = 3_600_000;

describe('Idempotency-Keys in the real Redis', () => {
  const prefix = `pgcloud-test-${randomBytes(4).toString('hex')}`;
  const gatewayA = new RedisIdempotencyStore(REDIS_URL, prefix, REDIS_TIMEOUT_MS);
  const gatewayB = new RedisIdempotencyStore(REDIS_URL, prefix, REDIS_TIMEOUT_MS);
  const redis = new Redis(REDIS_URL);

  after(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await gatewayA.onApplicationShutdown();
    await gatewayB.onApplicationShutdown();
  });

  it('lets one of two gateways claim a slot, and shows the other what is there', async () => {
    const claims = await Promise.all([
      gatewayA.claim('slot-1', 'pending-a', HOUR_MS),
      gatewayB.claim('slot-1', 'pending-b', HOUR_MS),
    ]);
    assert.equal(claims.filter((held) => held === null).length, 1, 'exactly one claimed it');
    const winner = claims[0] === null ? 'pending-a' : 'pending-b';
    assert.ok(claims.includes(winner), 'the other saw the claim');
    assert.equal(await redis.get(`${prefix}:idempotency:slot-1`), winner);
  });

  it('settles a slot only for the claim that holds it', async () => {
    assert.equal(await gatewayA.claim('slot-2', 'pending-a', HOUR_MS), null);
    await gatewayB.replace('slot-2', 'pending-b', 'answer-b', HOUR_MS);
    await gatewayB.release('slot-2', 'pending-b');
    assert.equal(await gatewayB.claim('slot-2', 'pending-b', HOUR_MS), 'pending-a');
    await gatewayA.replace('slot-2', 'pending-a', 'answer-a', HOUR_MS);
    assert.equal(await gatewayB.claim('slot-2', 'pending-b', HOUR_MS), 'answer-a');
    await gatewayA.release('slot-2', 'pending-a');
    assert.equal(await gatewayB.claim('slot-2', 'x', HOUR_MS), 'answer-a', 'answers stay');
    const ttl = await redis.pttl(`${prefix}:idempotency:slot-2`);
    assert.ok(ttl > 0 && ttl <= HOUR_MS, `the answer expires (${ttl})`);
  });

  it('frees a released claim for the next request', async () => {
    assert.equal(await gatewayA.claim('slot-3', 'pending-a', HOUR_MS), null);
    await gatewayA.release('slot-3', 'pending-a');
    assert.equal(await gatewayB.claim('slot-3', 'pending-b', HOUR_MS), null);
  });

  it('lets a claim lapse after its time', async () => {
    assert.equal(await gatewayA.claim('slot-4', 'pending-a', 200), null);
    await eventually(
      async () => assert.equal(await gatewayB.claim('slot-4', 'pending-b', HOUR_MS), null),
      {
        timeoutMs: 10_000,
      },
    );
  });

  it('fails, rather than claims, when Redis does not answer', async () => {
    const unreachable = new RedisIdempotencyStore('redis://127.0.0.1:1', prefix, 200);
    await assert.rejects(unreachable.claim('slot-5', 'pending', HOUR_MS));
    await unreachable.onApplicationShutdown();
  });
});
