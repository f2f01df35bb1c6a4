import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import type { DeviceTokenResult } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { loadConfig } from '../config.js';
import type { TokensService } from '../tokens/tokens.service.js';
import type { UsersService } from '../users/users.service.js';
import { pollAnswerFrom, primaryVerifiedEmail, refusalError } from './github-answers.js';
import type { HttpFetch } from './github-api.js';
import { GithubApi } from './github-api.js';
import { GithubDeviceFlowService } from './github-device-flow.service.js';

const ctx = { requestId: 'spec-github' };
const config = loadConfig({
  IDENTITY_PROVIDER: 'github',
  GITHUB_CLIENT_ID: 'spec-client',
  GITHUB_BASE_URL: 'http://github.test',
  GITHUB_API_URL: 'http://api.github.test/',
  RPC_TIMEOUT_MS: '200',
});

interface SeenRequest {
  url: string;
  init: RequestInit;
}
type Route = (request: SeenRequest) => Response | Promise<Response>;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** A GitHub answering from routes keyed by URL path, and the service in front of it. */
function serviceWith(routes: Record<string, Route>) {
  const seen: SeenRequest[] = [];
  const http: HttpFetch = {
    fetch: async (url, init) => {
      const request = { url, init };
      seen.push(request);
      const route = routes[new URL(url).pathname];
      return route ? route(request) : json({ message: 'Not Found' }, 404);
    },
  };
  const signIns: unknown[][] = [];
  const users = {
    signInExternal: (...args: [string, number, string, string]) => {
      signIns.push(args);
      const [identityProvider, identityId, login, email] = args;
      return Promise.resolve({ id: 'user_spec', identityProvider, identityId, login, email });
    },
  } as unknown as UsersService;
  const tokens = { issue: () => Promise.resolve('pgc_spec') } as unknown as TokensService;
  const api = new GithubApi(config, http);
  const service = new GithubDeviceFlowService(api, users, tokens, config);
  return { service, seen, signIns };
}

function tokenAnswer(body: unknown, status = 200) {
  return serviceWith({ '/login/oauth/access_token': () => json(body, status) });
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => err instanceof DomainError && err.code === code);
}

describe('GitHub poll answers', () => {
  before(() => {
    Logger.overrideLogger(false);
  });

  it('maps pending and slow_down (with GitHub interval) to our poll answers', async () => {
    const pending = tokenAnswer({ error: 'authorization_pending' });
    assert.deepEqual(await pending.service.poll(ctx, 'dc'), { status: 'pending' });
    const slow = tokenAnswer({ error: 'slow_down', interval: 15 });
    assert.deepEqual(await slow.service.poll(ctx, 'dc'), { status: 'slow_down', interval: 15 });
    assert.deepEqual(pollAnswerFrom({ error: 'slow_down' }), { status: 'slow_down', interval: 10 });
  });

  it('maps GitHub refusals to the DomainErrors of the device flow', async () => {
    const cases: [string, string][] = [
      ['access_denied', 'ACCESS_DENIED'],
      ['expired_token', 'DEVICE_CODE_EXPIRED'],
      ['incorrect_device_code', 'DEVICE_CODE_INVALID'],
      ['bad_verification_code', 'DEVICE_CODE_INVALID'],
      ['something_new', 'DEVICE_CODE_INVALID'],
    ];
    for (const [githubError, code] of cases) {
      assert.equal(refusalError(githubError).code, code, githubError);
      await rejectsWith(tokenAnswer({ error: githubError }).service.poll(ctx, 'dc'), code);
    }
    await rejectsWith(tokenAnswer('not json').service.poll(ctx, 'dc'), 'DEVICE_CODE_INVALID');
  });

  it('answers SERVICE_UNAVAILABLE when GitHub fails, is unreachable or too slow', async () => {
    await rejectsWith(tokenAnswer({}, 502).service.poll(ctx, 'dc'), 'SERVICE_UNAVAILABLE');
    const unreachable = serviceWith({
      '/login/oauth/access_token': () => {
        throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
      },
    });
    await rejectsWith(unreachable.service.poll(ctx, 'dc'), 'SERVICE_UNAVAILABLE');
    const slow = serviceWith({
      '/login/oauth/access_token': ({ init }) =>
        new Promise((_, reject) =>
          init.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)),
        ),
    });
    // AbortSignal.timeout does not keep the process alive; in the service RabbitMQ does.
    const keepAlive = setTimeout(() => undefined, 5000);
    const startedAt = Date.now();
    await rejectsWith(slow.service.poll(ctx, 'dc'), 'SERVICE_UNAVAILABLE');
    clearTimeout(keepAlive);
    assert.ok(Date.now() - startedAt < 1000, 'the deadline ends the wait');
  });

  it('sends the client id, the device code and the grant, as JSON-accepting pgcloud', async () => {
    const { service, seen } = tokenAnswer({ error: 'authorization_pending' });
    await service.poll(ctx, 'the-device-code');
    const [request] = seen;
    assert.equal(request?.url, 'http://github.test/login/oauth/access_token');
    assert.equal(request.init.method, 'POST');
    assert.deepEqual(
      Object.fromEntries(new URLSearchParams(request.init.body as URLSearchParams)),
      {
        client_id: 'spec-client',
        device_code: 'the-device-code',
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      },
    );
    const headers = request.init.headers as Record<string, string>;
    assert.equal(headers['accept'], 'application/json');
    assert.equal(headers['user-agent'], 'pgcloud');
  });
});

describe('GitHub sign-in on an approved poll', () => {
  before(() => {
    Logger.overrideLogger(false);
  });

  const approved = (user: unknown, emails: unknown) =>
    serviceWith({
      '/login/oauth/access_token': () => json({ access_token: 'gho_spec', token_type: 'bearer' }),
      '/user': () => json(user),
      '/user/emails': () => json(emails),
    });

  it('signs the GitHub user in by id and answers our own token', async () => {
    const { service, seen, signIns } = approved(
      { id: 42, login: 'octo', email: 'octo@example.com' },
      [],
    );
    const answer: DeviceTokenResult = await service.poll(ctx, 'dc');
    assert.deepEqual(answer, {
      access_token: 'pgc_spec',
      token_type: 'Bearer',
      user: { id: 'user_spec', identity_id: 42, login: 'octo', email: 'octo@example.com' },
    });
    assert.deepEqual(signIns, [['github', 42, 'octo', 'octo@example.com']]);
    const userCall = seen.find((request) => request.url === 'http://api.github.test/user');
    const headers = userCall?.init.headers as Record<string, string>;
    assert.equal(headers['authorization'], 'Bearer gho_spec');
    assert.ok(!seen.some((request) => request.url.endsWith('/user/emails')));
  });

  it('takes the primary verified email when the profile shows none', async () => {
    const emails = [
      { email: 'old@example.com', primary: false, verified: true },
      { email: 'main@example.com', primary: true, verified: true },
    ];
    const { service, signIns } = approved({ id: 7, login: 'quiet', email: null }, emails);
    await service.poll(ctx, 'dc');
    assert.deepEqual(signIns, [['github', 7, 'quiet', 'main@example.com']]);
    assert.equal(primaryVerifiedEmail([{ email: 'x@example.com', primary: true }]), null);
  });

  it('falls back to the noreply address without a primary verified email', async () => {
    const unverified = [{ email: 'new@example.com', primary: true, verified: false }];
    const { service, signIns } = approved({ id: 8, login: 'hidden', email: null }, unverified);
    await service.poll(ctx, 'dc');
    assert.deepEqual(signIns, [['github', 8, 'hidden', 'hidden@users.noreply.github.com']]);
  });
});
