import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { User, UserProfile } from '@pgcloud/contracts';
import { ApiClient, submitDeviceForm } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import { expectData, expectError } from '../support/assertions.js';
import { poll, startDevice } from '../support/device-flow.js';
import type { FakeDeviceState, FakeGithubUser } from '../support/fake-github.js';
import { FakeGithub } from '../support/fake-github.js';

const CLIENT_ID = 'pgcloud-test-client';

interface TokenAnswer {
  access_token: string;
  token_type: string;
  user: User;
}

/** A stack whose auth-service proxies the device flow to a fake GitHub. */
describe('the github identity provider (against a fake GitHub)', () => {
  let github: FakeGithub;
  let stack: Stack;
  let api: ApiClient;

  before(async () => {
    github = await FakeGithub.start(CLIENT_ID);
    stack = await Stack.start({
      apps: ['auth-service', 'api-gateway'],
      env: {
        IDENTITY_PROVIDER: 'github',
        GITHUB_CLIENT_ID: CLIENT_ID,
        GITHUB_BASE_URL: github.url,
        GITHUB_API_URL: github.url,
        // Every request of this suite comes from 127.0.0.1 and most are public.
        RATE_LIMIT_IP_PER_MINUTE: '6000',
        RATE_LIMIT_IP_BURST: '100',
        LOG_LEVEL: 'debug',
      },
    });
    api = new ApiClient(stack.baseUrl);
  });

  after(async () => {
    await stack?.stop();
    await github?.stop();
  });

  async function pollAs(state: FakeDeviceState) {
    const device = await startDevice(api);
    github.script(device.device_code, state);
    return poll(api, device.device_code);
  }

  async function signInAs(user: FakeGithubUser): Promise<TokenAnswer> {
    return expectData<TokenAnswer>(await pollAs({ kind: 'approved', user }), 200);
  }

  it("answers GitHub's device code, user code, URI, expiry and interval unchanged", async () => {
    const device = await startDevice(api);
    assert.deepEqual(device, github.issuedCode(device.device_code));
    assert.equal(device.verification_uri, `${github.url}/login/device`);
    assert.equal(device.expires_in, 899);
    assert.equal(device.interval, 6);
  });

  it("answers pending, then slow_down with GitHub's interval", async () => {
    const device = await startDevice(api);
    assert.deepEqual(expectData(await poll(api, device.device_code), 200), { status: 'pending' });
    github.script(device.device_code, { kind: 'slow_down', interval: 11 });
    assert.deepEqual(expectData(await poll(api, device.device_code), 200), {
      status: 'slow_down',
      interval: 11,
    });
  });

  it('answers 403 ACCESS_DENIED when denied on GitHub and 400 DEVICE_CODE_EXPIRED', async () => {
    expectError(await pollAs({ kind: 'denied' }), 403, 'ACCESS_DENIED');
    expectError(await pollAs({ kind: 'expired' }), 400, 'DEVICE_CODE_EXPIRED');
    expectError(await poll(api, 'not-a-code-github-issued'), 400, 'DEVICE_CODE_INVALID');
  });

  it('answers 503 SERVICE_UNAVAILABLE while GitHub fails', async () => {
    expectError(await pollAs({ kind: 'failing' }), 503, 'SERVICE_UNAVAILABLE');
  });

  it('signs an approved GitHub user in with our own token, once per device code', async () => {
    const device = await startDevice(api);
    const octocat = { id: 583231, login: 'octocat', email: 'octocat@example.com' };
    github.script(device.device_code, { kind: 'approved', user: octocat });
    const answer = expectData<TokenAnswer>(await poll(api, device.device_code), 200);
    assert.match(answer.access_token, /^pgc_[0-9A-Za-z]{40}$/);
    assert.equal(answer.token_type, 'Bearer');
    const { id, ...identity } = answer.user;
    assert.match(id, /^user_/);
    assert.deepEqual(identity, { identity_id: 583231, login: 'octocat', email: octocat.email });
    for (const githubToken of github.issuedTokens())
      assert.ok(!JSON.stringify(answer).includes(githubToken), 'the GitHub token stays inside');

    const me = expectData<UserProfile>(
      await api.withToken(answer.access_token).get('/auth/me'),
      200,
    );
    const { created_at, ...profile } = me;
    assert.deepEqual(profile, answer.user);
    assert.ok(!Number.isNaN(Date.parse(created_at)));
    expectError(await poll(api, device.device_code), 400, 'DEVICE_CODE_INVALID');
  });

  it('takes the primary verified email from /user/emails when the profile has none', async () => {
    const { user } = await signInAs({
      id: 9001,
      login: 'quiet-cat',
      email: null,
      emails: [
        { email: 'unverified@example.com', primary: false, verified: false },
        { email: 'old@example.com', primary: false, verified: true },
        { email: 'quiet@example.com', primary: true, verified: true },
      ],
    });
    assert.equal(user.email, 'quiet@example.com');
    assert.equal(user.identity_id, 9001);
    assert.ok(github.requests.includes('GET /user/emails'));
  });

  it('keeps the same pgcloud user on a later sign-in and takes the new login and email', async () => {
    const first = await signInAs({ id: 4242, login: 'renamer', email: 'a@example.com' });
    const again = await signInAs({ id: 4242, login: 'renamed', email: 'b@example.com' });
    assert.equal(again.user.id, first.user.id);
    assert.deepEqual(again.user, { ...first.user, login: 'renamed', email: 'b@example.com' });
    const me = expectData<UserProfile>(
      await api.withToken(first.access_token).get('/auth/me'),
      200,
    );
    assert.equal(me.login, 'renamed');
  });

  it('sends people who use the local /device page to GitHub', async () => {
    const device = await startDevice(api);
    const page = await submitDeviceForm(api, {
      user_code: device.user_code,
      login: 'octocat',
      action: 'approve',
    });
    assert.equal(page.status, 403);
    assert.match(page.body, /signs in with GitHub/);
    assert.ok(page.body.includes(device.verification_uri), page.body);
  });

  it('never sent GitHub a request it would refuse (client id, token, headers)', () => {
    assert.ok(github.requests.includes('POST /login/device/code'));
    assert.ok(github.requests.includes('POST /login/oauth/access_token'));
    assert.ok(github.requests.includes('GET /user'));
    assert.deepEqual(github.refused, []);
  });
});
