import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UserProfile } from '@pgcloud/contracts';
import { signIn, submitDeviceForm } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';
import type { TokenAnswer } from '../support/device-flow.js';
import { poll, sleep, startDevice } from '../support/device-flow.js';

describe('device flow sign-in (local identity provider)', () => {
  it('issues codes of the documented shape', async () => {
    const stack = await sharedStack();
    const device = await startDevice(await newClient());
    assert.match(device.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.ok(Buffer.from(device.device_code, 'base64url').length >= 32);
    assert.equal(device.verification_uri, `${stack.baseUrl}/device`);
    assert.equal(device.expires_in, 900);
    assert.equal(device.interval, 1);
  });

  it('serves the verification form at verification_uri', async () => {
    const api = await newClient();
    const device = await startDevice(api);
    const page = await fetch(device.verification_uri);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const html = await page.text();
    for (const field of [
      'name="user_code"',
      'name="login"',
      'name="email"',
      'name="action" value="approve"',
      'name="action" value="deny"',
    ]) {
      assert.ok(html.includes(field), `the form has ${field}`);
    }
  });

  it('answers pending until approved, then the token once, then DEVICE_CODE_INVALID', async () => {
    const api = await newClient();
    const login = uniqueLogin('ada');
    const device = await startDevice(api);
    assert.deepEqual(expectData(await poll(api, device.device_code), 200), { status: 'pending' });

    // The user code is compared case-insensitively and without the dash.
    const typed = device.user_code.replace('-', '').toLowerCase();
    const page = await submitDeviceForm(api, {
      user_code: typed,
      login,
      email: `${login}@example.com`,
      action: 'approve',
    });
    assert.equal(page.status, 200);
    assert.match(page.body, /Device approved/);

    await sleep(1100);
    const token = expectData<TokenAnswer>(await poll(api, device.device_code), 200);
    assert.match(token.access_token ?? '', /^pgc_[0-9A-Za-z]{40}$/);
    assert.equal(token.token_type, 'Bearer');
    assert.equal(token.user?.login, login);
    assert.equal(token.user?.email, `${login}@example.com`);
    assert.match(token.user?.id ?? '', /^user_[0-9a-z]{20}$/);
    assert.equal(typeof token.user?.identity_id, 'number');

    await sleep(1100);
    expectError(await poll(api, device.device_code), 400, 'DEVICE_CODE_INVALID');

    const me = expectData<UserProfile>(
      await api.withToken(token.access_token).get('/auth/me'),
      200,
    );
    assert.deepEqual({ ...me, created_at: undefined }, { ...token.user, created_at: undefined });
    assert.ok(!Number.isNaN(Date.parse(me.created_at)));
  });

  it('keeps identity_id stable for a login and sequential across new logins', async () => {
    const api = await newClient();
    const first = await signIn(api, uniqueLogin('seq'));
    const second = await signIn(api, uniqueLogin('seq'));
    const again = await signIn(api, first.user.login);
    assert.ok(second.user.identity_id > first.user.identity_id);
    assert.equal(again.user.identity_id, first.user.identity_id);
    assert.equal(again.user.id, first.user.id);
  });

  it('tells a client that polls too fast to slow down, adding 5 s each time', async () => {
    const api = await newClient();
    const device = await startDevice(api);
    // Polls back to back. The service compares the moments it took two polls in, which lie
    // between the first's sending and the second's answer: when those are closer than the
    // interval, the poll was too soon and must be told to slow down. A busy machine may
    // space them out further, and such a poll may be answered pending (the interval unchanged).
    let interval = device.interval;
    let previousSent = Date.now();
    expectData(await poll(api, device.device_code), 200);
    const slowDowns: TokenAnswer[] = [];
    for (let polls = 0; polls < 10 && slowDowns.length < 2; polls++) {
      const sent = Date.now();
      const answer = expectData<TokenAnswer>(await poll(api, device.device_code), 200);
      const answered = Date.now();
      if (answer.status === 'slow_down') {
        slowDowns.push(answer);
        interval = answer.interval ?? interval;
      } else {
        assert.deepEqual(answer, { status: 'pending' });
        assert.ok(
          answered - previousSent >= interval * 1000,
          `polled within ${interval} s of the poll before, yet not told to slow down`,
        );
      }
      previousSent = sent;
    }
    assert.deepEqual(slowDowns, [
      { status: 'slow_down', interval: 6 },
      { status: 'slow_down', interval: 11 },
    ]);
  });

  it('answers ACCESS_DENIED once the person denies', async () => {
    const api = await newClient();
    const device = await startDevice(api);
    const page = await submitDeviceForm(api, {
      user_code: device.user_code,
      login: uniqueLogin('deny'),
      action: 'deny',
    });
    assert.equal(page.status, 200);
    assert.match(page.body, /denied/);
    expectError(await poll(api, device.device_code), 403, 'ACCESS_DENIED');
  });

  it('refuses an unknown device code and a malformed poll', async () => {
    const api = await newClient();
    expectError(await poll(api, 'x'.repeat(43)), 400, 'DEVICE_CODE_INVALID');
    const error = expectError(await api.post('/auth/device/token', {}), 400, 'VALIDATION_ERROR');
    assert.ok(error.details?.some((d) => d.field === 'device_code'));
  });

  it('limits wrong codes per client IP: the eleventh try is refused, even with the right code', async () => {
    const api = await newClient();
    const device = await startDevice(api);
    for (let i = 0; i < 10; i++) {
      const page = await submitDeviceForm(api, {
        user_code: 'BBBB-BBBB',
        login: 'mallory',
        action: 'approve',
      });
      assert.equal(page.status, 400, `wrong code ${i + 1}`);
      assert.match(page.body, /not valid/);
    }
    const refused = await submitDeviceForm(api, {
      user_code: device.user_code,
      login: 'mallory',
      action: 'approve',
    });
    assert.equal(refused.status, 429);
    assert.match(refused.body, /Too many wrong codes/);
    assert.deepEqual(expectData(await poll(api, device.device_code), 200), { status: 'pending' });

    // Another address is not affected.
    const other = await newClient();
    const approved = await submitDeviceForm(other, {
      user_code: device.user_code,
      login: uniqueLogin('eve'),
      action: 'approve',
    });
    assert.equal(approved.status, 200);
  });

  it('shows a clear error for a badly filled form', async () => {
    const api = await newClient();
    const page = await submitDeviceForm(api, {
      user_code: 'BCDF-GHJK',
      login: 'not a login!',
      action: 'approve',
    });
    assert.equal(page.status, 400);
    assert.match(page.body, /login must be/);
  });
});
