import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ApiResponse } from '@pgcloud/testing';
import { ApiClient, eventually, openDeviceForm, signIn, submitDeviceForm } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import { expectData, expectError } from '../support/assertions.js';
import { poll, startDevice } from '../support/device-flow.js';
import { dripHead, requestWithHost } from '../support/raw-http.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

// docs/api/errors.md#rate-limits and #the-edge: the Host check, security headers, the verification
// form's anti-forgery token, TRUST_PROXY as a number of proxies, the IP bucket that pays
// for made-up tokens before auth-service is asked, and the sockets' timeouts.

const PUBLIC_HOST = 'api.pgcloud.test';
/** The direct edge's HTTP_HEADERS_TIMEOUT_MS, shortened from 10 s. */
const HEADERS_TIMEOUT_MS = 1500;

/** A gateway alone, as a public deployment would configure its edge. */
function edgeOnly(env: Record<string, string>): Promise<Stack> {
  return Stack.start({
    apps: ['api-gateway'],
    env: { RATE_LIMIT_IP_BURST: '5', RATE_LIMIT_IP_PER_MINUTE: '6', ...env },
  });
}

let addressCounter = 0;

/** A client address (as the trusted proxy reports it) that no other request used. */
function freshAddress(): Record<string, string> {
  addressCounter += 1;
  return { 'x-forwarded-for': `192.0.2.${addressCounter % 250}` };
}

/** Sends requests until one is 429; answers how many passed (bounded). */
async function drain(send: () => Promise<ApiResponse<unknown>>): Promise<number> {
  for (let passed = 0; passed < 50; passed++) {
    const response = await send();
    if (response.status === 429) return passed;
  }
  assert.fail('no 429 after 50 requests');
}

describe('the hardened edge: Host, proxies', () => {
  let publicEdge: Stack;
  let directEdge: Stack;

  before(async () => {
    [publicEdge, directEdge] = await Promise.all([
      edgeOnly({
        PUBLIC_BASE_URL: `https://${PUBLIC_HOST}`,
        ALLOWED_HOSTS: 'alt.pgcloud.test,Other.Pgcloud.Test',
        TRUST_PROXY: '1',
      }),
      edgeOnly({ TRUST_PROXY: '0', HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) }),
    ]);
  });

  after(async () => {
    await Promise.all([publicEdge?.stop(), directEdge?.stop()]);
  });

  it('refuses a foreign Host with 403 FORBIDDEN_HOST on every kind of route', async () => {
    for (const host of ['evil.example', 'api.pgcloud.test.evil.example', '127.0.0.1.nip.io:80'])
      for (const [method, path] of [
        ['GET', '/'],
        ['POST', '/auth/device'],
        ['GET', '/projects'],
        ['GET', '/device'],
        ['GET', '/docs'],
        ['GET', '/openapi.json'],
        ['GET', '/no/such/route'],
        ['GET', '/projects/%FF'],
      ] as const) {
        const response = await requestWithHost(publicEdge.baseUrl, host, path, {
          method,
          headers: { authorization: `Bearer pgc_${'x'.repeat(40)}` },
        });
        const error = expectError(response, 403, 'FORBIDDEN_HOST');
        assert.doesNotMatch(error.message, /evil|nip/, 'the message does not echo the Host');
      }
  });

  it('answers loopback names, PUBLIC_BASE_URL host and ALLOWED_HOSTS, with any port', async () => {
    for (const host of [
      'localhost',
      '127.0.0.1:8080',
      '[::1]:443',
      PUBLIC_HOST,
      'API.pgcloud.test:443',
      'alt.pgcloud.test',
      'other.pgcloud.test:8443',
    ]) {
      const document = await requestWithHost(publicEdge.baseUrl, host, '/openapi.json', {
        headers: freshAddress(),
      });
      assert.equal(document.status, 200, host);
      // An authenticated route passes the Host check and meets authentication.
      const projects = await requestWithHost(publicEdge.baseUrl, host, '/projects', {
        headers: freshAddress(),
      });
      expectError(projects, 401, 'AUTH_REQUIRED');
    }
  });

  it('with TRUST_PROXY=1, addresses that differ only on the left share one bucket', async () => {
    const clientAddress = '203.0.113.50';
    let n = 0;
    const spoofing = () => {
      n += 1;
      return requestWithHost(publicEdge.baseUrl, PUBLIC_HOST, '/openapi.json', {
        headers: { 'x-forwarded-for': `10.${n}.0.1, 198.51.100.${n}, ${clientAddress}` },
      });
    };
    const passed = await drain(spoofing);
    // Burst 5, refilled at one every 10 s: a few more at most on a slow machine.
    assert.ok(passed >= 5 && passed <= 7, `${passed} passed before 429`);
    // Another address (the entry the trusted proxy wrote) has a bucket of its own.
    const other = await requestWithHost(publicEdge.baseUrl, PUBLIC_HOST, '/openapi.json', {
      headers: { 'x-forwarded-for': `${clientAddress}, 203.0.113.51` },
    });
    assert.equal(other.status, 200);
  });

  it('cuts off a client that sends its request head a byte a second, at the header timeout', async () => {
    const limit = HEADERS_TIMEOUT_MS + 5000;
    const { elapsedMs: elapsed, answer } = await dripHead(
      directEdge.baseUrl,
      '/openapi.json',
      limit,
    );
    assert.ok(elapsed !== -1, `still open after ${limit} ms`);
    assert.ok(elapsed >= HEADERS_TIMEOUT_MS - 250, `cut off after ${elapsed} ms`);
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it('with TRUST_PROXY=0, X-Forwarded-For is ignored', async () => {
    let n = 0;
    const passed = await drain(() => {
      n += 1;
      return new ApiClient(directEdge.baseUrl, undefined, `203.0.113.${n}`).get('/openapi.json');
    });
    // One bucket, the socket's (127.0.0.1, which the stack's readiness checks used too):
    // with a bucket per forwarded address, all fifty would pass.
    assert.ok(passed <= 7, `${passed} passed before 429 from "different" clients`);
  });

  it('sends HSTS and Secure cookies only when PUBLIC_BASE_URL is https', async () => {
    const secure = await requestWithHost(publicEdge.baseUrl, PUBLIC_HOST, '/device', {
      headers: freshAddress(),
    });
    assert.equal(secure.status, 200);
    assert.match(secure.headers.get('strict-transport-security') ?? '', /max-age=\d+/);
    assert.match(secure.headers.get('set-cookie') ?? '', /; Secure/i);
    const plain = await new ApiClient(directEdge.baseUrl).get('/openapi.json');
    assert.equal(plain.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(plain.headers.get('strict-transport-security'), null);
  });
});

describe('the hardened edge: headers and the verification form', () => {
  it('sends nosniff, no referrer and no-store everywhere; frame protection on pages', async () => {
    const api = await newClient();
    const { token } = await signIn(api, uniqueLogin('hdr'));
    const signedIn = api.withToken(token);
    const answers: [string, ApiResponse<unknown>][] = [
      ['GET /', await api.get('/')],
      ['GET /projects', await signedIn.get('/projects')],
      ['GET /auth/me', await signedIn.get('/auth/me')],
      ['POST /auth/device', await api.post('/auth/device')],
      ['POST /auth/device/token', await api.post('/auth/device/token', { device_code: 'x' })],
      ['GET /nowhere', await api.get('/nowhere')],
      ['GET /device', await api.get('/device')],
      ['GET /docs', await api.get('/docs')],
      ['GET /openapi.json', await api.get('/openapi.json')],
    ];
    for (const [what, response] of answers) {
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', what);
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer', what);
      assert.equal(response.headers.get('cache-control'), 'no-store', what);
      assert.equal(response.headers.get('x-frame-options'), 'DENY', what);
      assert.match(
        response.headers.get('content-security-policy') ?? '',
        /frame-ancestors 'none'/,
        what,
      );
    }
    const page = answers.find(([what]) => what === 'GET /device')?.[1];
    assert.match(page?.headers.get('content-security-policy') ?? '', /form-action 'self'/);
  });

  it('sets the form cookie HttpOnly and SameSite=Strict', async () => {
    const page = await (await newClient()).get('/device');
    const cookie = page.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Strict/i);
    assert.match(cookie, /Path=\/device/i);
  });

  it('approves nothing without the cookie pair or from another origin', async () => {
    const api = await newClient();
    const device = await startDevice(api);
    const form = { user_code: device.user_code, login: uniqueLogin('csrf'), action: 'approve' };
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      api.request<string>('POST', '/device', {
        rawBody: new URLSearchParams(fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
    const session = await openDeviceForm(api);
    const other = await openDeviceForm(api);
    const refused = [
      await post(form),
      await post({ ...form, form_token: session.formToken }),
      await post(form, { cookie: session.cookie }),
      await post({ ...form, form_token: other.formToken }, { cookie: session.cookie }),
      await post(
        { ...form, form_token: session.formToken },
        {
          cookie: session.cookie,
          origin: 'http://evil.example',
        },
      ),
      await post(
        { ...form, form_token: session.formToken },
        { cookie: session.cookie, origin: 'null', 'sec-fetch-site': 'same-site' },
      ),
      await post(
        { ...form, form_token: session.formToken },
        { cookie: session.cookie, 'sec-fetch-site': 'cross-site' },
      ),
    ];
    for (const [i, response] of refused.entries()) {
      assert.equal(response.status, 403, `attempt ${i}`);
      assert.match(String(response.body), /<form method="post"/, `attempt ${i} shows the form`);
      assert.match(String(response.body), /role="alert"/, `attempt ${i} says why`);
    }
    assert.deepEqual(expectData(await poll(api, device.device_code), 200), { status: 'pending' });

    // The same form from this site's own page approves.
    const stack = await sharedStack();
    const approved = await submitDeviceForm(api, { ...form, action: 'approve' }, session);
    assert.equal(approved.status, 200, String(approved.body));
    const sameOrigin = await openDeviceForm(api);
    const second = await startDevice(api);
    const viaOrigin = await post(
      { ...form, user_code: second.user_code, form_token: sameOrigin.formToken },
      { cookie: sameOrigin.cookie, origin: new URL(stack.baseUrl).origin },
    );
    assert.equal(viaOrigin.status, 200, String(viaOrigin.body));
  });
});

describe('the hardened edge: made-up tokens', () => {
  it("serves a fresh token's first ten requests though its device flow emptied the address's bucket", async () => {
    const client = await newClient();
    const { api } = await signIn(client, uniqueLogin('fresh-token'));
    // The same address's public requests empty its IP bucket (the shared stack's: 30).
    const anonymous = client.withToken(undefined);
    assert.ok((await drain(() => anonymous.get('/'))) >= 1);
    // The token is new to the gateway: looked up, and never charged to the address.
    for (let sent = 1; sent <= 10; sent++) {
      const response = await api.get('/projects');
      assert.equal(response.status, 200, `request ${sent} of the fresh token`);
      // Charged to its user (the shared stack's Free bucket), not to the address's 600.
      assert.equal(response.headers.get('x-ratelimit-limit'), '60000');
    }
  });

  it('meets a flood of random tokens with 429 after the IP burst, before auth-service', async () => {
    const stack = await sharedStack();
    const api = await newClient();
    const sent: { id: string; status: number }[] = [];
    const guess = async () => {
      const id = randomUUID();
      const token = `pgc_${randomBytes(30).toString('base64url').slice(0, 40)}`;
      const response = await api.get('/projects', {
        headers: { authorization: `Bearer ${token}`, 'x-request-id': id },
      });
      assert.ok([401, 429].includes(response.status), `answered ${response.status}`);
      sent.push({ id, status: response.status });
    };
    // All at once: each is charged to the IP as the gateway reads it, before any lookup,
    // so the bucket (the shared stack's: burst 30, 10 a second) empties however slowly
    // auth-service answers.
    await Promise.all(Array.from({ length: 200 }, guess));
    const refused = sent.filter((s) => s.status === 429);
    const looked = sent.filter((s) => s.status === 401);
    assert.ok(refused.length > 0, 'the flood met 429');
    assert.ok(looked.length >= 30, `${looked.length} were looked up (the burst)`);

    // Every 401 was a lookup in auth-service; once its log shows them all, it shows none
    // of the 429s: those never left the gateway.
    await eventually(() => {
      const lookups = new Set(
        stack
          .logRecords('auth-service')
          .filter((r) => r.message === 'token lookup')
          .map((r) => r.request_id),
      );
      const missing = looked.filter((s) => !lookups.has(s.id));
      assert.equal(missing.length, 0, `${missing.length} lookups not logged yet`);
    });
    const log = stack.logOf('auth-service');
    const leaked = refused.filter((s) => log.includes(s.id));
    assert.equal(leaked.length, 0, `${leaked.length} refused requests reached auth-service`);
  });
});
