import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import type { GatewayConfig } from '../config.js';
import type { FirstRequest, RepeatedRequest } from './idempotency-keys.js';
import { ANSWER_TTL_MS, IdempotencyKeys } from './idempotency-keys.js';
import { IdempotencyStore, InMemoryIdempotencyStore } from './idempotency.store.js';

const RPC_TIMEOUT_MS = 5000;

/** Two gateways sharing one store, on a clock the test moves. */
function gateways() {
  const clock = { now: 1_000_000 };
  const store = new InMemoryIdempotencyStore(() => clock.now);
  const config = { RPC_TIMEOUT_MS } as GatewayConfig;
  return {
    clock,
    first: new IdempotencyKeys(store, config),
    second: new IdempotencyKeys(store, config),
  };
}

function asFirst(claimed: FirstRequest | RepeatedRequest): FirstRequest {
  if (claimed.kind !== 'first') assert.fail('expected the first request, got a replay');
  return claimed;
}

function rejectsWith(code: string) {
  return (err: unknown) => err instanceof DomainError && err.code === code;
}

describe('IdempotencyKeys', () => {
  it('runs the first request, answers 409 while it runs, then replays its answer', async () => {
    const { first, second } = gateways();
    const running = asFirst(await first.claim('r1', 'user_a', 'k', 'fp'));
    await assert.rejects(
      second.claim('r2', 'user_a', 'k', 'fp'),
      rejectsWith('OPERATION_IN_PROGRESS'),
    );
    await first.answered(running, { id: 'proj_1' });
    assert.deepEqual(await second.claim('r3', 'user_a', 'k', 'fp'), {
      kind: 'replay',
      answer: { data: { id: 'proj_1' } },
    });
  });

  it('refuses the key with another request, running or answered: 422', async () => {
    const { first, second } = gateways();
    const running = asFirst(await first.claim('r1', 'user_a', 'k', 'fp'));
    await assert.rejects(
      second.claim('r2', 'user_a', 'k', 'other'),
      rejectsWith('IDEMPOTENCY_KEY_REUSED'),
    );
    await first.answered(running, { id: 'proj_1' });
    await assert.rejects(
      second.claim('r3', 'user_a', 'k', 'other'),
      rejectsWith('IDEMPOTENCY_KEY_REUSED'),
    );
  });

  it("keeps each user's keys apart", async () => {
    const { first } = gateways();
    asFirst(await first.claim('r1', 'user_a', 'k', 'fp-a'));
    asFirst(await first.claim('r2', 'user_b', 'k', 'fp-b'));
  });

  it('replays a 4xx answer like a success', async () => {
    const { first, second } = gateways();
    const running = asFirst(await first.claim('r1', 'user_a', 'k', 'fp'));
    const taken = new DomainError('PROJECT_NAME_TAKEN', 'You already have a project named "x".');
    await first.failed(running, taken);
    assert.deepEqual(await second.claim('r2', 'user_a', 'k', 'fp'), {
      kind: 'replay',
      answer: { error: taken.toBody() },
    });
  });

  it('frees the key after a 5xx or an unexpected error, so a retry runs', async () => {
    const { first, second } = gateways();
    Logger.overrideLogger(false);
    for (const err of [new DomainError('SERVICE_UNAVAILABLE', 'down'), new Error('boom')]) {
      const running = asFirst(await first.claim('r1', 'user_a', 'k', 'fp'));
      await first.failed(running, err);
      const retry = asFirst(await second.claim('r2', 'user_a', 'k', 'fp'));
      await second.failed(retry, new DomainError('INTERNAL_ERROR', 'x'));
    }
    Logger.overrideLogger(['log', 'error', 'warn']);
  });

  it('lets a claim lapse past the request timeout, and an answer after 24 h', async () => {
    const { clock, first, second } = gateways();
    const stalled = asFirst(await first.claim('r1', 'user_a', 'k', 'fp'));
    clock.now += RPC_TIMEOUT_MS + 1000;
    await assert.rejects(
      second.claim('r2', 'user_a', 'k', 'fp'),
      rejectsWith('OPERATION_IN_PROGRESS'),
    );
    clock.now += 60_000;
    const retry = asFirst(await second.claim('r3', 'user_a', 'k', 'fp'));
    await first.answered(stalled, { id: 'late' }); // no longer its slot: changes nothing
    await second.answered(retry, { id: 'proj_2' });
    const replay = await first.claim('r4', 'user_a', 'k', 'fp');
    assert.deepEqual(replay, { kind: 'replay', answer: { data: { id: 'proj_2' } } });
    clock.now += ANSWER_TTL_MS;
    asFirst(await first.claim('r5', 'user_a', 'k', 'fp'));
  });

  it('refuses a request with a key when the store does not answer: 503, nothing run', async () => {
    class DownStore extends IdempotencyStore {
      claim(): Promise<string | null> {
        return Promise.reject(new Error('Command timed out'));
      }
      replace(): Promise<void> {
        return Promise.reject(new Error('Command timed out'));
      }
      release(): Promise<void> {
        return Promise.reject(new Error('Command timed out'));
      }
    }
    const keys = new IdempotencyKeys(new DownStore(), { RPC_TIMEOUT_MS } as GatewayConfig);
    Logger.overrideLogger(false);
    await assert.rejects(keys.claim('r1', 'user_a', 'k', 'fp'), rejectsWith('SERVICE_UNAVAILABLE'));
    Logger.overrideLogger(['log', 'error', 'warn']);
  });
});
