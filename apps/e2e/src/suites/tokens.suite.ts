import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedApiKey, TokenInfo, TokenList } from '@pgcloud/contracts';
import { eventuallyDefined, signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { newClient, uniqueLogin } from '../support/shared-stack.js';

const DAY_MS = 86_400_000;

/** Tokens users see and control: the list, API keys, revocation, logout of all. */
describe('tokens and API keys', () => {
  it('lists the live tokens of the caller, marking the calling one, never a secret', async () => {
    const login = uniqueLogin('lister');
    const first = await signIn(await newClient(), login);
    const second = await signIn(await newClient(), login);
    const listed = expectData<TokenList>(await second.api.get('/auth/tokens'), 200).tokens;
    assert.equal(listed.length, 2);
    assert.deepEqual(
      listed.map((t) => [t.kind, t.name, t.current]),
      [
        ['device', 'device sign-in', true],
        ['device', 'device sign-in', false],
      ],
      'newest first, the calling one current',
    );
    for (const token of listed) {
      assert.match(token.id, /^tok_[0-9a-z]{20}$/);
      assert.ok(!JSON.stringify(token).includes('pgc_'), 'no secret in the list');
      assert.ok(Date.parse(token.expires_at) > Date.now() + 29 * DAY_MS);
    }
    expectData(await first.api.post('/auth/logout'), 200);
    const after = expectData<TokenList>(await second.api.get('/auth/tokens'), 200).tokens;
    assert.deepEqual(
      after.map((t) => t.current),
      [true],
      'a revoked token is no longer listed',
    );
  });

  it('makes an API key: shown once, works as a bearer token, listed without its secret, revoked', async () => {
    const owner = await signIn(await newClient(), uniqueLogin('keys'));
    const response = await owner.api.post('/auth/tokens', {
      name: 'ci deploy #1',
      expires_in_days: 7,
    });
    const key = expectData<CreatedApiKey>(response, 201);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.match(key.token, /^pgc_[0-9A-Za-z]{40}$/);
    assert.equal(key.kind, 'api_key');
    assert.equal(key.name, 'ci deploy #1');
    assert.equal(key.current, false);
    assert.equal(key.last_used_at, null);
    const days = (Date.parse(key.expires_at) - Date.parse(key.created_at)) / DAY_MS;
    assert.ok(Math.abs(days - 7) < 0.01, `expires after 7 days (${days})`);

    const asKey = (await newClient()).withToken(key.token);
    const me = expectData<{ id: string }>(await asKey.get('/auth/me'), 200);
    assert.equal(me.id, owner.user.id);
    const seenByKey = expectData<TokenList>(await asKey.get('/auth/tokens'), 200).tokens;
    assert.equal(seenByKey.find((t) => t.current)?.id, key.id, 'the key is the current token');

    // Its last use shows within a minute (here the flush runs every second).
    const used = await eventuallyDefined(
      'the last use in the list',
      async () => {
        const listed = expectData<TokenList>(await owner.api.get('/auth/tokens'), 200).tokens;
        const found = listed.find((t) => t.id === key.id);
        return found?.last_used_at ? found : undefined;
      },
      { timeoutMs: 10_000 },
    );
    assert.ok(!('token' in used), 'the list never shows the secret');
    assert.ok(Date.parse(used.last_used_at ?? '') >= Date.parse(key.created_at));

    const revoked = expectData<{ id: string; deleted: boolean }>(
      await owner.api.delete(`/auth/tokens/${key.id}`),
      200,
    );
    assert.deepEqual(revoked, { id: key.id, deleted: true });
    expectError(await asKey.get('/auth/me'), 401, 'AUTH_REQUIRED');
    expectError(await owner.api.delete(`/auth/tokens/${key.id}`), 404, 'TOKEN_NOT_FOUND');
    const listed = expectData<TokenList>(await owner.api.get('/auth/tokens'), 200).tokens;
    assert.ok(!listed.some((t) => t.id === key.id));
  });

  it('refuses bad API key requests, and tokens of others or of no one', async () => {
    const owner = await signIn(await newClient(), uniqueLogin('badkeys'));
    const other = await signIn(await newClient(), uniqueLogin('otherkeys'));
    for (const body of [
      {},
      { name: '' },
      { name: 'x'.repeat(65) },
      { name: 'tab\there' },
      { name: 'é' },
      { name: 'ok', expires_in_days: 0 },
      { name: 'ok', expires_in_days: 366 },
      { name: 'ok', expires_in_days: 1.5 },
      { name: 'ok', expires_in_days: '7' },
      { name: 'ok', extra: true },
    ])
      expectError(await owner.api.post('/auth/tokens', body), 400, 'VALIDATION_ERROR');
    const othersToken = expectData<TokenList>(await other.api.get('/auth/tokens'), 200).tokens[0];
    assert.ok(othersToken);
    for (const id of [othersToken.id, 'tok_aaaaaaaaaaaaaaaaaaaa', 'not-an-id', 'proj_x'])
      expectError(await owner.api.delete(`/auth/tokens/${id}`), 404, 'TOKEN_NOT_FOUND');
    expectData(await other.api.get('/auth/me'), 200);
    expectError(await owner.api.post('/auth/logout?all=yes'), 400, 'VALIDATION_ERROR');
    expectData(await owner.api.get('/auth/me'), 200);
    assert.deepEqual(
      expectData<TokenList>(await owner.api.get('/auth/tokens'), 200).tokens.map((t) => t.kind),
      ['device'],
      'nothing was made',
    );
  });

  it('keeps at most 20 live API keys per user; a revoked one makes room', async () => {
    const owner = await signIn(await newClient(), uniqueLogin('manykeys'));
    const keys: CreatedApiKey[] = [];
    for (let i = 1; i <= 20; i++)
      keys.push(
        expectData<CreatedApiKey>(await owner.api.post('/auth/tokens', { name: `k${i}` }), 201),
      );
    expectError(await owner.api.post('/auth/tokens', { name: 'k21' }), 403, 'QUOTA_EXCEEDED');
    const first = keys[0];
    assert.ok(first);
    expectData(await owner.api.delete(`/auth/tokens/${first.id}`), 200);
    expectData(await owner.api.post('/auth/tokens', { name: 'k21' }), 201);
    const listed = expectData<TokenList>(await owner.api.get('/auth/tokens'), 200).tokens;
    assert.equal(listed.filter((t: TokenInfo) => t.kind === 'api_key').length, 20);
  });

  it('logout?all=true ends every token of the caller, and no one else’s', async () => {
    const login = uniqueLogin('everywhere');
    const laptop = await signIn(await newClient(), login);
    const desktop = await signIn(await newClient(), login);
    const key = expectData<CreatedApiKey>(
      await laptop.api.post('/auth/tokens', { name: 'ci' }),
      201,
    );
    const bystander = await signIn(await newClient(), uniqueLogin('bystander'));
    const asKey = (await newClient()).withToken(key.token);
    for (const api of [desktop.api, asKey]) expectData(await api.get('/auth/me'), 200);

    const answer = expectData<{ revoked: boolean; count: number }>(
      await laptop.api.post('/auth/logout?all=true'),
      200,
    );
    assert.deepEqual(answer, { revoked: true, count: 3 });
    for (const api of [laptop.api, desktop.api, asKey])
      expectError(await api.get('/auth/me'), 401, 'AUTH_REQUIRED');
    expectData(await bystander.api.get('/auth/me'), 200);
  });
});
