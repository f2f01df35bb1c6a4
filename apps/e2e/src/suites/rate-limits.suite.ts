import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiResponse, SignedIn } from '@pgcloud/testing';
import { ApiClient, Stack, signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { sleep } from '../support/device-flow.js';
import { uniqueLogin } from '../support/shared-stack.js';

function header(response: ApiResponse<unknown>, name: string): number {
  const value = response.headers.get(name);
  assert.ok(value !== null, `${name} is present`);
  return Number(value);
}

describe('rate limits with the default tiers', () => {
  let stack: Stack;
  let anonymous: ApiClient;

  before(async () => {
    // Default bucket sizes; only the IP bucket is widened so sign-ins are not limited.
    stack = await Stack.start({
      env: {
        DEVICE_POLL_INTERVAL_SECONDS: '1',
        RATE_LIMIT_IP_BURST: '100',
        RATE_LIMIT_IP_PER_MINUTE: '6000',
      },
    });
    anonymous = new ApiClient(stack.baseUrl);
  });

  after(async () => {
    await stack?.stop();
  });

  it('Free: ten at once pass, the eleventh is 429 with Retry-After, and one passes a second later', async () => {
    const { api } = await signIn(anonymous, uniqueLogin('free'));
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push(await api.get('/projects'));
    answers.slice(0, 10).forEach((response, i) => {
      expectData(response, 200);
      assert.equal(header(response, 'x-ratelimit-limit'), 60);
      assert.ok(
        header(response, 'x-ratelimit-remaining') <= 9 - i + 1,
        `remaining after request ${i + 1}`,
      );
    });
    const limited = answers[10];
    assert.ok(limited);
    expectError(limited, 429, 'RATE_LIMIT_EXCEEDED');
    assert.equal(header(limited, 'x-ratelimit-limit'), 60);
    assert.equal(header(limited, 'x-ratelimit-remaining'), 0);
    assert.ok(header(limited, 'retry-after') >= 1);
    assert.ok(header(limited, 'x-ratelimit-reset') >= 1);

    await sleep(1100);
    expectData(await api.get('/projects'), 200);
    expectError(await api.get('/projects'), 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('Pro: a burst of 100, set by the admin command', async () => {
    const login = uniqueLogin('pro');
    await signIn(anonymous, login);
    const output = await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
    assert.match(output, /is now on the pro tier/);
    const pro: SignedIn = await signIn(anonymous, login);

    const startedAt = Date.now();
    const burst = await Promise.all(Array.from({ length: 100 }, () => pro.api.get('/projects')));
    burst.forEach((response) => {
      expectData(response, 200);
      assert.equal(header(response, 'x-ratelimit-limit'), 1000);
    });
    // The bucket refills at 1000/60 a second meanwhile; the admitted total stays within
    // burst + rate x elapsed.
    let admitted = 100;
    let limited: ApiResponse<unknown> | undefined;
    while (!limited) {
      const response = await pro.api.get('/projects');
      if (response.status === 429) limited = response;
      else admitted += 1;
    }
    const elapsedSeconds = (Date.now() - startedAt) / 1000;
    assert.ok(
      admitted <= 100 + Math.ceil((1000 / 60) * elapsedSeconds) + 1,
      `${admitted} admitted in ${elapsedSeconds} s`,
    );
    expectError(limited, 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('refuses a bad tier in the admin command', async () => {
    await assert.rejects(stack.runAdmin('auth-service', ['set-tier', 'nobody', 'gold']));
    await assert.rejects(
      stack.runAdmin('auth-service', ['set-tier', `no-such-${Date.now()}`, 'pro']),
      /no user/,
    );
  });
});
