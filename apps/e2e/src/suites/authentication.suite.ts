import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { newClient, uniqueLogin } from '../support/shared-stack.js';

describe('bearer authentication', () => {
  const refusedHeaders: [string, Record<string, string>][] = [
    ['missing', {}],
    ['malformed (Basic)', { authorization: 'Basic YWxpY2U6c2VjcmV0' }],
    ['malformed (no token)', { authorization: 'Bearer' }],
    ['malformed (not a pgcloud token)', { authorization: 'Bearer not-a-token' }],
    ['unknown', { authorization: `Bearer pgc_${'A1b2C3d4E5'.repeat(4)}` }],
  ];
  for (const [name, headers] of refusedHeaders) {
    it(`answers 401 AUTH_REQUIRED for a ${name} token`, async () => {
      const api = await newClient();
      const response = await api.get('/projects', { headers });
      expectError(response, 401, 'AUTH_REQUIRED');
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
    });
  }

  it('takes the token from the Authorization header only, never from the URL or the body', async () => {
    const { token } = await signIn(await newClient(), uniqueLogin('where'));
    const anonymous = await newClient();
    const basic = { authorization: 'Basic YWxpY2U6c2VjcmV0' };
    for (const headers of [basic, {}]) {
      const inQuery = await anonymous.get(`/projects?access_token=${token}`, { headers });
      expectError(inQuery, 401, 'AUTH_REQUIRED');
      const inBody = await anonymous.post(
        '/projects',
        { name: 'token-in-body', access_token: token },
        { headers },
      );
      expectError(inBody, 401, 'AUTH_REQUIRED');
    }
  });

  it('refuses a revoked token at once after logout', async () => {
    const { api } = await signIn(await newClient(), uniqueLogin('bye'));
    expectData(await api.get('/projects'), 200);
    assert.deepEqual(expectData(await api.post('/auth/logout'), 200), { revoked: true, count: 1 });
    expectError(await api.get('/projects'), 401, 'AUTH_REQUIRED');
    expectError(await api.get('/auth/me'), 401, 'AUTH_REQUIRED');
  });

  it('keeps other tokens of the same user valid after one logs out', async () => {
    const login = uniqueLogin('two');
    const first = await signIn(await newClient(), login);
    const second = await signIn(await newClient(), login);
    expectData(await first.api.post('/auth/logout'), 200);
    expectData(await second.api.get('/auth/me'), 200);
  });

  it('leaves the public routes open', async () => {
    const api = await newClient();
    expectData(await api.get('/'), 200);
    expectData(await api.post('/auth/device'), 200);
    const page = await api.get<string>('/device');
    assert.equal(page.status, 200);
  });
});
