import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { getDatabaseUrl, unwrap } from '@pgcloud/api-client';
import { seenSecrets } from './answer-secrets.js';
import { testApi } from './test-api.js';

describe('testApi', () => {
  const password = 'Secr3t-pass-1234';
  const seen: { url?: string; authorization?: string; forwardedFor?: string }[] = [];
  const server = createServer((request, response) => {
    seen.push({
      url: request.url,
      authorization: request.headers.authorization,
      forwardedFor: request.headers['x-forwarded-for'] as string | undefined,
    });
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.end(
      JSON.stringify({
        success: true,
        data: { connection_string: `postgresql://app:${password}@127.0.0.1:5433/app` },
      }),
    );
  });
  let baseUrl = '';

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the token and headers, and remembers the secrets of the answer', async () => {
    const client = testApi(baseUrl, 'pgc_token', { 'x-forwarded-for': '203.0.113.7' });
    const details = await unwrap(
      getDatabaseUrl({ client, path: { project_id: 'proj_1', name: 'app' } }),
    );
    assert.ok(details.connection_string.includes(password));
    assert.deepEqual(seen.at(-1), {
      url: '/projects/proj_1/databases/app/url',
      authorization: 'Bearer pgc_token',
      forwardedFor: '203.0.113.7',
    });
    assert.ok(seenSecrets().has(password));
    assert.ok(seenSecrets().has(details.connection_string));
  });
});
