import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiResponse, SignedIn } from '@pgcloud/testing';
import { ApiClient, signIn } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import { expectData, expectError } from '../support/assertions.js';
import { sleep } from '../support/device-flow.js';
import { uniqueLogin } from '../support/shared-stack.js';

function header(response: ApiResponse<unknown>, name: string): number {
  const value = response.headers.get(name);
  assert.ok(value !== null, `${name} is present`);
  return Number(value);
}

/** Seconds since `startedAt`: at least the time the bucket had to refill meanwhile. */
function secondsSince(startedAt: number): number {
  return (Date.now() - startedAt) / 1000;
}

/** How long a test may spend emptying a bucket: far more than it takes. */
const DRAIN_BOUND_MS = 60_000;

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
    // The bucket refills at one token a second meanwhile: when the requests take a second
    // or more, one more passes for each second, never more (burst + rate x elapsed).
    const startedAt = Date.now();
    let admitted = 0;
    let limited: ApiResponse<unknown> | undefined;
    let limitedSentAt = 0;
    while (!limited) {
      assert.ok(Date.now() - startedAt < DRAIN_BOUND_MS, `still admitted after ${admitted}`);
      const sentAt = Date.now();
      const response = await api.get('/projects');
      const elapsed = secondsSince(startedAt);
      if (response.status === 429) {
        limited = response;
        limitedSentAt = sentAt;
        break;
      }
      expectData(response, 200);
      assert.equal(header(response, 'x-ratelimit-limit'), 60);
      assert.ok(
        header(response, 'x-ratelimit-remaining') <= 9 - admitted + Math.ceil(elapsed),
        `remaining after request ${admitted + 1}, ${elapsed} s in`,
      );
      admitted += 1;
    }
    const elapsedSeconds = secondsSince(startedAt);
    assert.ok(admitted >= 10, `the burst of ten passes (${admitted})`);
    assert.ok(
      admitted <= 10 + Math.floor(elapsedSeconds),
      `${admitted} admitted before the first 429, in ${elapsedSeconds} s`,
    );
    expectError(limited, 429, 'RATE_LIMIT_EXCEEDED');
    assert.equal(header(limited, 'x-ratelimit-limit'), 60);
    assert.equal(header(limited, 'x-ratelimit-remaining'), 0);
    assert.ok(header(limited, 'retry-after') >= 1);
    assert.ok(header(limited, 'x-ratelimit-reset') >= 1);

    // Less than a token was left at the 429: 1.1 s later one is there, and then the bucket
    // is empty again after at most what refilled since the 429.
    await sleep(1100);
    expectData(await api.get('/projects'), 200);
    let again = 1;
    for (;;) {
      assert.ok(Date.now() - limitedSentAt < DRAIN_BOUND_MS, `still admitted after ${again}`);
      const response = await api.get('/projects');
      if (response.status === 429) break;
      expectData(response, 200);
      again += 1;
    }
    const sinceLimited = secondsSince(limitedSentAt);
    assert.ok(
      again < 1 + sinceLimited,
      `${again} admitted in the ${sinceLimited} s since the 429, at one token a second`,
    );
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
    // burst + rate x elapsed. Requests go in batches, so they outrun the refill however
    // slowly each one is answered.
    let admitted = 100;
    let limited: ApiResponse<unknown> | undefined;
    while (!limited) {
      assert.ok(Date.now() - startedAt < DRAIN_BOUND_MS, `still admitted after ${admitted}`);
      const batch = await Promise.all(Array.from({ length: 25 }, () => pro.api.get('/projects')));
      for (const response of batch) {
        if (response.status === 429) limited ??= response;
        else {
          expectData(response, 200);
          admitted += 1;
        }
      }
    }
    const elapsedSeconds = secondsSince(startedAt);
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
