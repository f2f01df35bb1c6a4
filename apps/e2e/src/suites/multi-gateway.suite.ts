import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiClient, signIn } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import { expectData, expectError } from '../support/assertions.js';
import { sleep } from '../support/device-flow.js';
import { uniqueLogin } from '../support/shared-stack.js';

/** Two gateways of one stack sharing Redis, as replicas behind a load balancer. */
describe('two gateways', () => {
  let stack: Stack;
  let first: ApiClient;
  let second: ApiClient;

  before(async () => {
    stack = await Stack.start({
      env: {
        REDIS_URL: 'redis://127.0.0.1:6379',
        DEVICE_POLL_INTERVAL_SECONDS: '1',
        RATE_LIMIT_IP_BURST: '100',
        RATE_LIMIT_IP_PER_MINUTE: '6000',
        // A gateway whose Redis call times out limits on its own buckets for a while (by
        // design); a busy machine must not make that happen mid-test for a slow answer.
        REDIS_TIMEOUT_MS: '2000',
      },
    });
    first = new ApiClient(stack.baseUrl);
    second = new ApiClient((await stack.startExtraGateway()).baseUrl);
  });

  after(async () => {
    await stack?.stop();
  });

  it("share a Free user's bucket: at most burst + rate x elapsed over both", async () => {
    const { token } = await signIn(first, uniqueLogin('spread'));
    // A number of requests rather than a time: how many fit in a time is the machine's speed.
    const requests = 60;
    const startedAt = Date.now();
    let admitted = 0;
    for (let i = 0; i < requests; i++) {
      const gateway = (i % 2 === 0 ? first : second).withToken(token);
      const response = await gateway.get('/auth/me');
      if (response.status === 200) admitted += 1;
      else expectError(response, 429, 'RATE_LIMIT_EXCEEDED');
    }
    const elapsedSeconds = (Date.now() - startedAt) / 1000;
    assert.ok(admitted >= 10, `the burst passes (${admitted})`);
    assert.ok(admitted < requests, `the shared bucket ran dry (${admitted} of ${requests})`);
    assert.ok(
      admitted <= 10 + Math.ceil(elapsedSeconds) + 1,
      `${admitted} admitted in ${elapsedSeconds} s over two gateways`,
    );
  });

  it('refuse a revoked token: the one that logged out at once, the other within 10 s', async () => {
    const { token } = await signIn(first, uniqueLogin('revoke'));
    expectData(await second.withToken(token).get('/auth/me'), 200); // now cached by the second
    expectData(await first.withToken(token).post('/auth/logout'), 200);
    expectError(await first.withToken(token).get('/auth/me'), 401, 'AUTH_REQUIRED');
    assert.ok(await refusedWithin10s(second, token), 'the second gateway refuses it within 10 s');
  });

  it('refuse a revoked API key: the gateway that revoked it at once, the other within 10 s', async () => {
    const owner = await signIn(first, uniqueLogin('apikey'));
    const key = expectData<{ id: string; token: string }>(
      await owner.api.post('/auth/tokens', { name: 'deploy' }),
      201,
    );
    for (const gateway of [first, second])
      expectData(await gateway.withToken(key.token).get('/auth/me'), 200); // cached by both
    expectData(await owner.api.delete(`/auth/tokens/${key.id}`), 200);
    expectError(await first.withToken(key.token).get('/auth/me'), 401, 'AUTH_REQUIRED');
    assert.ok(
      await refusedWithin10s(second, key.token),
      'the second gateway refuses it within 10 s',
    );
    expectData(await owner.api.get('/auth/me'), 200); // the device token still works
  });
});

/**
 * True once the gateway refuses the token, asked every second for 10 s from now. Until the
 * gateway learns of the revocation each ask spends the owner's Free bucket, which refills a
 * token a second: asked faster, a slow machine empties it and the owner's next request is 429.
 */
async function refusedWithin10s(gateway: ApiClient, token: string): Promise<boolean> {
  const since = Date.now();
  while (Date.now() - since < 10_000) {
    if ((await gateway.withToken(token).get('/auth/me')).status === 401) return true;
    await sleep(1000);
  }
  return false;
}
