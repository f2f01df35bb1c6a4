import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertSafeToOpen } from './auth.js';
import { route, runCli } from './fake-api.testing.js';

const KEY = 'tok_bbbbbbbbbbbbbbbbbbbb';
const SECRET = `pgc_${'s'.repeat(40)}`;

function token(id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    name: 'device sign-in',
    kind: 'device',
    created_at: '2026-01-01T00:00:00.000Z',
    last_used_at: null,
    expires_at: '2026-01-31T00:00:00.000Z',
    current: false,
    ...extra,
  };
}

describe('tokens', () => {
  it('lists the tokens, marking the one in use', async (t) => {
    const run = await runCli(
      t,
      ['tokens', 'list'],
      [
        route('GET', '/auth/tokens', {
          tokens: [
            token('tok_aaaaaaaaaaaaaaaaaaaa', { current: true }),
            token(KEY, { name: 'ci', kind: 'api_key' }),
          ],
        }),
      ],
      'account',
    );
    assert.equal(run.exitCode, undefined);
    assert.match(run.stdout, /device sign-in \(this one\)/);
    assert.match(run.stdout, new RegExp(`${KEY}\\s+ci\\s+api_key`));
  });

  it('creates an API key, printing its secret once; --quiet prints only the secret', async (t) => {
    const created = { ...token(KEY, { name: 'ci deploy', kind: 'api_key' }), token: SECRET };
    const run = await runCli(
      t,
      ['tokens', 'create', 'ci deploy', '--expires-in-days', '7'],
      [route('POST', '/auth/tokens', created)],
      'account',
    );
    assert.deepEqual(run.requests[0]?.body, { name: 'ci deploy', expires_in_days: 7 });
    assert.match(run.stdout, new RegExp(`\\n${SECRET}\\n`));
    assert.match(run.stdout, /only time the key is shown/);
    const quiet = await runCli(
      t,
      ['tokens', 'create', 'ci deploy', '-q'],
      [route('POST', '/auth/tokens', created)],
      'account',
    );
    assert.deepEqual(quiet.requests[0]?.body, { name: 'ci deploy' });
    assert.equal(quiet.stdout, `${SECRET}\n`);
  });

  it('refuses days out of range before any request', async (t) => {
    const run = await runCli(
      t,
      ['tokens', 'create', 'ci', '--expires-in-days', '400'],
      [],
      'account',
    );
    assert.equal(run.exitCode, 2);
    assert.equal(run.requests.length, 0);
  });

  it('revokes a token by id', async (t) => {
    const run = await runCli(
      t,
      ['tokens', 'revoke', KEY],
      [route('DELETE', `/auth/tokens/${KEY}`, { id: KEY, deleted: true })],
      'account',
    );
    assert.equal(run.requests[0]?.method, 'DELETE');
    assert.match(run.stdout, /Revoked tok_b/);
  });

  it('refuses --token with the reason, sending nothing', async (t) => {
    const run = await runCli(t, ['tokens', 'list', '--token', SECRET], [], 'account');
    assert.equal(run.exitCode, 2);
    assert.equal(run.requests.length, 0);
    assert.match(run.stderr, /visible to every user of this machine/);
    assert.match(run.stderr, /PGCLOUD_TOKEN/);
  });

  it('logs out everywhere with --all', async (t) => {
    const run = await runCli(
      t,
      ['logout', '--all'],
      [route('POST', '/auth/logout', { revoked: true, count: 3 })],
      'account',
    );
    assert.equal(run.requests[0]?.url.searchParams.get('all'), 'true');
    assert.match(run.stdout, /3 token\(s\)/);
  });
});

describe('login', () => {
  it('opens only https: pages, or http: on this machine', () => {
    for (const uri of [
      'https://pgcloud.example/device',
      'http://127.0.0.1:8080/device',
      'http://localhost:8080/device',
      'http://[::1]:8080/device',
    ])
      assert.doesNotThrow(() => assertSafeToOpen(uri), uri);
    for (const uri of [
      'javascript:alert(1)',
      'file:///etc/passwd',
      'http://pgcloud.example/device',
      'http://127.0.0.1.evil.example/device',
      'data:text/html,<script>1</script>',
      'not a url',
    ])
      assert.throws(() => assertSafeToOpen(uri), /neither https: nor http: on this machine/, uri);
  });
});
