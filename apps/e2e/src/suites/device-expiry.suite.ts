import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DeviceAuthorization } from '@pgcloud/contracts';
import { ApiClient, Stack, submitDeviceForm } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';

describe('device codes expire after expires_in', () => {
  let stack: Stack;

  before(async () => {
    stack = await Stack.start({
      apps: ['auth-service', 'api-gateway'],
      env: { DEVICE_CODE_TTL_SECONDS: '10', DEVICE_POLL_INTERVAL_SECONDS: '1' },
    });
  });

  after(async () => {
    await stack?.stop();
  });

  it('answers DEVICE_CODE_EXPIRED to the poll and a clear error on the page', async () => {
    const api = new ApiClient(stack.baseUrl);
    const device = expectData<DeviceAuthorization>(await api.post('/auth/device'), 200);
    assert.equal(device.expires_in, 10);
    assert.deepEqual(
      expectData(await api.post('/auth/device/token', { device_code: device.device_code }), 200),
      { status: 'pending' },
    );
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    expectError(
      await api.post('/auth/device/token', { device_code: device.device_code }),
      400,
      'DEVICE_CODE_EXPIRED',
    );
    const page = await submitDeviceForm(api, {
      user_code: device.user_code,
      login: 'late',
      action: 'approve',
    });
    assert.equal(page.status, 400);
    assert.match(page.body, /expired/);
  });
});
