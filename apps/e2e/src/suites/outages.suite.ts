import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiResponse, SignedIn } from '@pgcloud/testing';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import { PrivateRabbitMq, Stack } from '@pgcloud/devstack';
import { expectData, expectError } from '../support/assertions.js';
import { sleep } from '../support/device-flow.js';

const RPC_TIMEOUT_MS = 2000;
/**
 * A request may take the RPC timeout and some more, never hang: the slack is for a busy
 * machine (these tests state that the timeout applies, not how fast the gateway is).
 */
const ANSWER_BOUND_MS = RPC_TIMEOUT_MS + 5000;
/** How soon requests succeed again once the broker is back (what the test promises). */
const RECOVERY_BOUND_MS = 10_000;

async function timed(
  request: Promise<ApiResponse<unknown>>,
): Promise<[ApiResponse<unknown>, number]> {
  const startedAt = Date.now();
  const response = await request;
  return [response, Date.now() - startedAt];
}

/** A stack on a broker of its own, so stopping the broker touches nothing else. */
describe('outages of a service and of the broker', () => {
  let broker: PrivateRabbitMq;
  let stack: Stack;
  let user: SignedIn;

  before(async () => {
    broker = await PrivateRabbitMq.start();
    stack = await Stack.start({
      env: {
        RABBITMQ_URL: broker.url,
        RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
        DEVICE_POLL_INTERVAL_SECONDS: '1',
        RATE_LIMIT_FREE_BURST: '1000',
        RATE_LIMIT_FREE_PER_MINUTE: '60000',
      },
    });
    user = await signIn(new ApiClient(stack.baseUrl), 'outage-watcher');
  });

  after(async () => {
    await stack?.stop();
    await broker?.destroy();
  });

  it('answers 503 within the timeout while project-service is down, and normally once it is back', async () => {
    expectData(await user.api.post('/projects', { name: 'before-outage' }), 201);
    await stack.stopApp('project-service');
    const [down, elapsed] = await timed(user.api.get('/projects'));
    expectError(down, 503, 'SERVICE_UNAVAILABLE');
    assert.ok(elapsed < ANSWER_BOUND_MS, `answered after ${elapsed} ms`);
    const health = expectData<{ status: string }>(await user.api.get('/'), 200);
    assert.equal(health.status, 'degraded');

    await stack.startApp('project-service');
    const { projects } = expectData<{ projects: { name: string }[] }>(
      await user.api.get('/projects'),
      200,
    );
    assert.deepEqual(
      projects.map((p) => p.name),
      ['before-outage'],
    );
  });

  it('answers 503 while RabbitMQ is down, never hangs, and recovers within 10 s of its return', async () => {
    await broker.halt();
    const during = await Promise.all(
      Array.from({ length: 3 }, () => timed(user.api.get('/projects'))),
    );
    for (const [response, elapsed] of during) {
      expectError(response, 503, 'SERVICE_UNAVAILABLE');
      assert.ok(elapsed < ANSWER_BOUND_MS, `answered after ${elapsed} ms`);
    }

    await broker.resume();
    const backAt = Date.now();
    // Recovered when a request sent within the bound succeeds, however long it then takes
    // to answer (that is bounded on its own).
    let last: ApiResponse<unknown> | undefined;
    for (;;) {
      const sentAfterMs = Date.now() - backAt;
      assert.ok(
        sentAfterMs < RECOVERY_BOUND_MS,
        `requests succeed again within 10 s of the broker coming back; the last answered ` +
          `${last?.status}: ${JSON.stringify(last?.body)}`,
      );
      const [response, elapsed] = await timed(user.api.get('/projects'));
      assert.ok(elapsed < ANSWER_BOUND_MS, `answered after ${elapsed} ms`);
      if (response.status === 200) break;
      last = response;
      await sleep(250);
    }
    expectData(await user.api.post('/projects', { name: 'after-outage' }), 201);
    // Every other service reconnects to the broker on its own schedule: healthy once all do.
    await eventually(
      async () => {
        const health = expectData<{ status: string }>(await user.api.get('/'), 200);
        assert.equal(health.status, 'healthy');
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
  });
});
