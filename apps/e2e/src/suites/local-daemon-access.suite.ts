import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { ApiClient } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { requestWithHost } from '../support/local-daemon.js';
import { dripHead } from '../support/raw-http.js';
import { DAEMON_HEADERS_TIMEOUT_MS, sharedDaemon } from '../support/shared-daemon.js';

describe('local daemon: token, Host and slow clients', () => {
  it('wants its token: 401 AUTH_REQUIRED with WWW-Authenticate: Bearer otherwise', async () => {
    const daemon = await sharedDaemon();
    const token = await daemon.token();
    for (const api of [
      new ApiClient(daemon.baseUrl),
      new ApiClient(daemon.baseUrl, 'wrong-token-of-some-length'),
      new ApiClient(daemon.baseUrl, `${token}x`),
      new ApiClient(daemon.baseUrl, token.slice(0, -1)),
    ]) {
      for (const response of [
        await api.get('/databases'),
        await api.get('/databases/anything'),
        await api.post('/databases', { name: 'never-made' }),
        await api.delete('/databases/anything'),
        await api.post('/databases/anything/snapshots', { name: 'never-made' }),
        await api.get('/databases/anything/snapshots'),
        await api.delete('/databases/anything/snapshots/anything'),
        await api.post('/databases/anything/reset', { snapshot: 'anything' }),
      ]) {
        expectError(response, 401, 'AUTH_REQUIRED');
        assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      }
    }
    const basic = await new ApiClient(daemon.baseUrl).get('/databases', {
      headers: { authorization: `Basic ${token}` },
    });
    expectError(basic, 401, 'AUTH_REQUIRED');
    expectData(await (await daemon.api()).get('/databases'), 200);
  });

  it('keeps its token in a file of mode 0600 that only its owner reads', async () => {
    const daemon = await sharedDaemon();
    assert.match(await daemon.token(), /^pgcd_[A-Za-z0-9_-]{43}$/);
    assert.equal((await stat(daemon.env['DAEMON_TOKEN_FILE'] ?? '')).mode & 0o777, 0o600);
  });

  it('answers only loopback Host names, before anything else: 403 FORBIDDEN_HOST', async () => {
    const daemon = await sharedDaemon();
    const token = await daemon.token();
    const port = daemon.env['DAEMON_PORT'] ?? '';
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      '10.0.0.1',
    ]) {
      for (const [method, path, withToken] of [
        ['GET', '/databases', true],
        ['GET', '/databases', false],
        ['POST', '/databases', true],
        ['GET', '/no/such/route', false],
      ] as const) {
        const response = await requestWithHost(daemon.baseUrl, host, method, path, {
          token: withToken ? token : undefined,
          body: method === 'POST' ? { name: 'never-made' } : undefined,
        });
        expectError(response, 403, 'FORBIDDEN_HOST');
      }
    }
    for (const host of ['localhost', `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const response = await requestWithHost(daemon.baseUrl, host, 'GET', '/databases', { token });
      expectData(response, 200);
    }
    const list = expectData<{ databases: { name: string }[] }>(
      await (await daemon.api()).get('/databases'),
      200,
    );
    assert.ok(!list.databases.some((database) => database.name === 'never-made'));
  });

  it('answers unknown routes 404 NOT_FOUND, with or without the token', async () => {
    const daemon = await sharedDaemon();
    const api = await daemon.api();
    expectError(await api.get('/'), 404, 'NOT_FOUND');
    expectError(await api.request('PUT', '/databases'), 404, 'NOT_FOUND');
    expectError(await new ApiClient(daemon.baseUrl).get('/projects'), 404, 'NOT_FOUND');
  });

  it('cuts off a client that sends its request head a byte a second, at the header timeout', async () => {
    const daemon = await sharedDaemon();
    const limit = DAEMON_HEADERS_TIMEOUT_MS + 5000;
    const { elapsedMs, answer } = await dripHead(daemon.baseUrl, '/databases', limit);
    assert.ok(elapsedMs !== -1, `still open after ${limit} ms`);
    assert.ok(elapsedMs >= DAEMON_HEADERS_TIMEOUT_MS - 250, `cut off after ${elapsedMs} ms`);
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it('echoes X-Request-Id, or makes one', async () => {
    const api = await (await sharedDaemon()).api();
    const echoed = await api.get('/databases', { headers: { 'x-request-id': 'trace-daemon-1' } });
    assert.equal(echoed.headers.get('x-request-id'), 'trace-daemon-1');
    const made = await api.get('/databases/none');
    assert.match(made.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});
