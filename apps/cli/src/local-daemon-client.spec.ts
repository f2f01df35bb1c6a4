import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ApiError, ApiUnreachableError } from '@pgcloud/api-client';
import { CliError, EXIT, exitCodeOf } from './exit-codes.js';
import {
  LocalDaemonClient,
  daemonTokenPath,
  daemonUrl,
  readDaemonToken,
} from './local-daemon-client.js';

interface Seen {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A client whose fetch answers `status` with `body` and records the request. */
function clientAnswering(status: number, body: unknown, seen: Seen[] = []): LocalDaemonClient {
  const fakeFetch = (url: string, init?: RequestInit) => {
    seen.push({
      url,
      method: init?.method ?? 'GET',
      headers: (init?.headers ?? {}) as Record<string, string>,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return Promise.resolve(new Response(text, { status, headers: { 'x-request-id': 'req-1' } }));
  };
  return new LocalDaemonClient({
    baseUrl: 'http://127.0.0.1:5999/',
    token: 'secret',
    fetch: fakeFetch as typeof fetch,
  });
}

function failure(code: string, message = 'why') {
  return { success: false, error: { code, message } };
}

describe('LocalDaemonClient', () => {
  it("answers the envelope's data and sends the token, the body and the escaped name", async () => {
    const seen: Seen[] = [];
    const deleted = await clientAnswering(
      200,
      { success: true, data: { name: 'a b', deleted: true } },
      seen,
    ).delete('a b');
    assert.deepEqual(deleted, { name: 'a b', deleted: true });
    assert.equal(seen[0]?.url, 'http://127.0.0.1:5999/databases/a%20b');
    assert.equal(seen[0]?.method, 'DELETE');
    assert.equal(seen[0]?.headers['authorization'], 'Bearer secret');

    await clientAnswering(201, { success: true, data: {} }, seen).create({
      name: 'copy',
      template: 'app',
    });
    assert.equal(seen[1]?.method, 'POST');
    assert.equal(seen[1]?.headers['content-type'], 'application/json');
    assert.deepEqual(seen[1]?.body, { name: 'copy', template: 'app' });
  });

  it('maps error answers to ApiError and its exit codes', async () => {
    const cases: [number, string, number][] = [
      [404, 'TEMPLATE_NOT_FOUND', EXIT.notFound],
      [404, 'DATABASE_NOT_FOUND', EXIT.notFound],
      [409, 'DATABASE_NAME_TAKEN', EXIT.conflict],
      [409, 'TEMPLATE_IN_USE', EXIT.conflict],
      [400, 'VALIDATION_ERROR', EXIT.usage],
      [401, 'AUTH_REQUIRED', EXIT.auth],
      [403, 'FORBIDDEN_HOST', EXIT.error],
      [503, 'SERVICE_UNAVAILABLE', EXIT.unavailable],
    ];
    for (const [status, code, exit] of cases) {
      const error = await clientAnswering(status, failure(code, 'the reason'))
        .get('app')
        .then(
          () => assert.fail(`${code} resolved`),
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof ApiError, code);
      assert.equal(error.code, code);
      assert.equal(error.message, 'the reason');
      assert.equal(error.requestId, 'req-1');
      assert.equal(exitCodeOf(error), exit, code);
    }
  });

  it('reports an answer without the envelope as an error, not as data', async () => {
    await assert.rejects(clientAnswering(200, '<html>hi</html>').list(), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, 'NOT_A_DAEMON');
      return true;
    });
    await assert.rejects(clientAnswering(502, 'Bad Gateway').list(), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(exitCodeOf(error), EXIT.unavailable);
      return true;
    });
  });

  it('reports a daemon that does not answer as unreachable (exit 6), saying how to start it', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const client = new LocalDaemonClient({
      baseUrl: 'http://127.0.0.1:5999',
      token: 'secret',
      fetch: () => Promise.reject(new TypeError('fetch failed', { cause: refused })),
    });
    await assert.rejects(client.list(), (error: unknown) => {
      assert.ok(error instanceof ApiUnreachableError);
      assert.equal(exitCodeOf(error), EXIT.unavailable);
      assert.match(error.message, /local daemon at http:\/\/127\.0\.0\.1:5999 \(ECONNREFUSED\)/);
      assert.match(error.message, /npm run daemon/);
      assert.doesNotMatch(error.message, /secret/);
      return true;
    });
  });
});

describe('daemon address and token', () => {
  it('takes --daemon-url, then PGCLOUD_DAEMON_URL, then the default', () => {
    const env = { PGCLOUD_DAEMON_URL: 'http://127.0.0.1:7000' };
    assert.equal(daemonUrl('http://127.0.0.1:6000', env), 'http://127.0.0.1:6000');
    assert.equal(daemonUrl(undefined, env), 'http://127.0.0.1:7000');
    assert.equal(daemonUrl(undefined, {}), 'http://127.0.0.1:5480');
  });

  it('finds the token file where the daemon writes it', () => {
    assert.equal(
      daemonTokenPath({ XDG_CONFIG_HOME: '/cfg', HOME: '/home/a' }),
      join('/cfg', 'pgcloud', 'daemon.token'),
    );
    assert.equal(
      daemonTokenPath({ HOME: '/home/a' }),
      join('/home/a', '.config', 'pgcloud', 'daemon.token'),
    );
    assert.equal(
      daemonTokenPath({ DAEMON_TOKEN_FILE: '/t/token', XDG_CONFIG_HOME: '/cfg' }),
      '/t/token',
    );
  });

  it('reads the token, and says to start the daemon when there is none (exit 3)', () => {
    const directory = mkdtempSync(join(tmpdir(), 'pgcloud-cli-spec-'));
    try {
      const file = join(directory, 'daemon.token');
      const missing = (error: unknown) =>
        error instanceof CliError &&
        error.exitCode === EXIT.auth &&
        error.message.includes('npm run daemon');
      assert.throws(() => readDaemonToken({ DAEMON_TOKEN_FILE: file }), missing);
      writeFileSync(file, '\n');
      assert.throws(() => readDaemonToken({ DAEMON_TOKEN_FILE: file }), missing);
      writeFileSync(file, 'tok123\n');
      assert.equal(readDaemonToken({ DAEMON_TOKEN_FILE: file }), 'tok123');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
