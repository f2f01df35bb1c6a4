import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiResponse } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { newClient, uniqueLogin } from '../support/shared-stack.js';

describe('the HTTP edge', () => {
  it('answers GET / with name, version and healthy', async () => {
    const api = await newClient();
    assert.deepEqual(expectData(await api.get('/'), 200), {
      name: 'pgcloud',
      version: '0.1.0',
      status: 'healthy',
    });
  });

  it('answers unknown routes and methods with the NOT_FOUND envelope', async () => {
    const api = await newClient();
    expectError(await api.get('/no/such/route'), 404, 'NOT_FOUND');
    expectError(await api.request('PUT', '/projects'), 404, 'NOT_FOUND');
    const { api: user } = await signIn(api, uniqueLogin('lost'));
    expectError(await user.get('/projectz'), 404, 'NOT_FOUND');
  });

  it('refuses a 100 KiB body with 413, checked before authentication', async () => {
    const api = await newClient();
    const big = { name: 'x'.repeat(100 * 1024) };
    expectError(await api.post('/projects', big), 413, 'PAYLOAD_TOO_LARGE');
    const { api: user } = await signIn(api, uniqueLogin('big'));
    expectError(await user.post('/projects', big), 413, 'PAYLOAD_TOO_LARGE');
    // An unknown route is 404 whatever its body.
    expectError(await user.post('/nowhere', big), 404, 'NOT_FOUND');
    // Just under the limit is read and validated.
    expectError(
      await user.post('/projects', { name: 'x'.repeat(60 * 1024) }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('refuses malformed JSON as VALIDATION_ERROR, after authentication', async () => {
    const anonymous = await newClient();
    const { api } = await signIn(anonymous, uniqueLogin('json'));
    const malformed = { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } };
    expectError(await api.request('POST', '/projects', malformed), 400, 'VALIDATION_ERROR');
    // docs/api/errors.md#the-order-of-checks: authentication (401) is checked before validation (400).
    expectError(await anonymous.request('POST', '/projects', malformed), 401, 'AUTH_REQUIRED');
    const badToken = anonymous.withToken(`pgc_${'x'.repeat(40)}`);
    expectError(await badToken.request('POST', '/projects', malformed), 401, 'AUTH_REQUIRED');
    // A public route has no authentication to pass: the body is what is wrong.
    expectError(
      await anonymous.request('POST', '/auth/device/token', malformed),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('echoes X-Request-Id, or makes one', async () => {
    const api = await newClient();
    const echoed = await api.get('/', { headers: { 'x-request-id': 'trace-123' } });
    assert.equal(echoed.headers.get('x-request-id'), 'trace-123');
    const made = await api.get('/no/such/route');
    assert.match(made.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const unsafe = await api.get('/', { headers: { 'x-request-id': 'a b<script>' } });
    assert.notEqual(unsafe.headers.get('x-request-id'), 'a b<script>');
  });

  it("spends an anonymous client's IP bucket before refusing it (429 before 401)", async () => {
    const api = await newClient();
    // The shared stack's IP bucket: 30 at once, 600 a minute (one more every 100 ms). Asked
    // one after another, requests slower than 100 ms (a busy machine) would never empty it:
    // they go in rounds of 50 at once, far faster than it refills, until one is refused.
    const started = Date.now();
    let served = 0;
    let limited: ApiResponse | undefined;
    for (let round = 0; round < 10 && !limited; round++) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => api.get('/projects')));
      for (const answer of answers) {
        if (answer.status === 429) {
          limited ??= answer;
          continue;
        }
        expectError(answer, 401, 'AUTH_REQUIRED');
        assert.equal(answer.headers.get('x-ratelimit-limit'), '600');
        served += 1;
      }
    }
    const refilled = Math.ceil(((Date.now() - started) / 1000) * 10);
    assert.ok(limited, `refused at last (${served} served)`);
    assert.ok(served >= 30, `the burst of 30 was served (${served})`);
    assert.ok(served <= 30 + refilled, `${served} served, burst 30 + ${refilled} refilled`);
    expectError(limited, 429, 'RATE_LIMIT_EXCEEDED');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });
});
