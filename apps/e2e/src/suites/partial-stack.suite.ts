import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiClient, signIn, submitDeviceForm } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import { expectData, expectError } from '../support/assertions.js';
import { sleep, startDevice } from '../support/device-flow.js';

/** A stack without project-service, whose device codes live 10 s. */
describe('a stack with a short device TTL and no project-service', () => {
  let stack: Stack;
  let api: ApiClient;

  before(async () => {
    stack = await Stack.start({
      apps: ['auth-service', 'api-gateway'],
      env: {
        DEVICE_CODE_TTL_SECONDS: '10',
        DEVICE_POLL_INTERVAL_SECONDS: '1',
        RPC_TIMEOUT_MS: '1500',
      },
    });
    api = new ApiClient(stack.baseUrl);
  });

  after(async () => {
    await stack?.stop();
  });

  it('expires device codes: DEVICE_CODE_EXPIRED to the poll, a clear error on the page', async () => {
    const device = await startDevice(api);
    assert.equal(device.expires_in, 10);
    const pending = await api.post('/auth/device/token', { device_code: device.device_code });
    assert.deepEqual(expectData(pending, 200), { status: 'pending' });
    await sleep(10_500);
    const expired = await api.post('/auth/device/token', { device_code: device.device_code });
    expectError(expired, 400, 'DEVICE_CODE_EXPIRED');
    const page = await submitDeviceForm(api, {
      user_code: device.user_code,
      login: 'late',
      action: 'approve',
    });
    assert.equal(page.status, 400);
    assert.match(page.body, /expired/);
  });

  it('reports degraded health while a service does not answer', async () => {
    const health = expectData<{ status: string }>(await api.get('/'), 200);
    assert.equal(health.status, 'degraded');
  });

  it('answers 503 SERVICE_UNAVAILABLE within the timeout, never hangs', async () => {
    const { api: user } = await signIn(api, 'waiting');
    const startedAt = Date.now();
    expectError(await user.get('/projects'), 503, 'SERVICE_UNAVAILABLE');
    const elapsed = Date.now() - startedAt;
    // It waited out the 1.5 s RPC timeout, and then answered: the upper bound has slack
    // for a busy machine, it only tells an answer from a hang.
    assert.ok(elapsed >= 1400 && elapsed < 1500 + 5000, `answered after ${elapsed} ms`);
  });
});
