import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { FastifyReply } from 'fastify';
import { defer, throwError } from 'rxjs';
import type { GatewayConfig } from '../config.js';
import { answerOnceSpent } from './overlapped-spend.interceptor.js';
import { InMemoryRateLimitStore } from './rate-limit.store.js';
import { RateLimiter } from './rate-limiter.js';

/** A spend that settles after `ms`, refusing or not. */
function spendAfter(ms: number, refuse = false): Promise<void> {
  return sleep(ms).then(() => {
    if (refuse) throw new DomainError('RATE_LIMIT_EXCEEDED', 'Too many requests.');
  });
}

describe('answerOnceSpent', () => {
  it('answers the read once the token is spent, the read running meanwhile', async () => {
    let started = 0;
    const read = defer(() => {
      started = performance.now();
      return Promise.resolve('rows');
    });
    const spentAt = spendAfter(50).then(() => performance.now());
    const answer = await answerOnceSpent(
      spentAt.then(() => undefined),
      read,
    );
    assert.equal(answer, 'rows');
    assert.ok(started > 0 && started < (await spentAt), 'the read began before the spend ended');
  });

  it('answers a refusal whatever the read answered, and the read error only once allowed', async () => {
    await assert.rejects(
      answerOnceSpent(
        spendAfter(20, true),
        defer(() => Promise.resolve('rows')),
      ),
      { code: 'RATE_LIMIT_EXCEEDED' },
    );
    await assert.rejects(
      answerOnceSpent(
        spendAfter(20, true),
        throwError(() => new DomainError('VALIDATION_ERROR', 'bad')),
      ),
      { code: 'RATE_LIMIT_EXCEEDED' },
    );
    await assert.rejects(
      answerOnceSpent(
        spendAfter(20),
        throwError(() => new DomainError('VALIDATION_ERROR', 'bad')),
      ),
      { code: 'VALIDATION_ERROR' },
    );
  });
});

describe('RateLimiter.mayOverlap', () => {
  it('lets a read spend meanwhile only while the last spend left half the burst', async () => {
    const config = {
      RATE_LIMIT_FREE_PER_MINUTE: 60,
      RATE_LIMIT_FREE_BURST: 4,
    } as GatewayConfig;
    const limiter = new RateLimiter(new InMemoryRateLimitStore(), config);
    const user = { id: 'usr_aaaaaaaaaaaaaaaaaaaa', tier: 'free' } as AuthenticatedUser;
    const reply = { headers: () => reply, header: () => reply } as unknown as FastifyReply;
    const spend = () => limiter.spend({ ip: '192.0.2.1', headers: {} } as never, reply, user);
    assert.equal(limiter.mayOverlap(user), false, 'nothing known of the user yet');
    await spend(); // 3 left
    assert.equal(limiter.mayOverlap(user), true);
    await spend(); // 2 left
    assert.equal(limiter.mayOverlap(user), true);
    await spend(); // 1 left
    assert.equal(limiter.mayOverlap(user), false, 'near its limit: the bucket first');
  });
});
