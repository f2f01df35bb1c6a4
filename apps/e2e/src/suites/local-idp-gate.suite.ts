import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Stack, runAppToCompletion } from '@pgcloud/devstack';
import { eventually } from '@pgcloud/testing';

const PUBLIC_URL = 'https://pgcloud.example.com';

/** How many times auth-service has warned that it runs the local provider insecurely. */
function warnings(stack: Stack): number {
  return stack
    .logRecords('auth-service')
    .filter((r) => r.level === 'warn' && String(r.message).includes('LOCAL_IDP_INSECURE=true'))
    .length;
}

/**
 * docs/api/auth.md#device-sign-in: the local identity provider runs only where nobody else reaches
 * it.
 */
describe('auth-service with the local identity provider beyond loopback', () => {
  let stack: Stack;

  before(async () => {
    // Its own database and queues, and no app yet: each test starts auth-service itself.
    stack = await Stack.start({ apps: [], env: { PUBLIC_BASE_URL: PUBLIC_URL } });
  });

  after(async () => {
    await stack?.stop();
  });

  it('refuses to start with a public PUBLIC_BASE_URL, naming LOCAL_IDP_INSECURE', async () => {
    const run = await runAppToCompletion('auth-service', {
      ...stack.env,
      LOCAL_IDP_INSECURE: 'false',
    });
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /refuses to start/);
    assert.match(run.output, /pgcloud\.example\.com is not a loopback name/);
    assert.match(run.output, /LOCAL_IDP_INSECURE=true/);
    assert.match(run.output, /IDENTITY_PROVIDER=github/);
    assert.doesNotMatch(run.output, /is listening on/);
  });

  it('refuses to start when the gateway listens beyond loopback', async () => {
    const run = await runAppToCompletion('auth-service', {
      ...stack.env,
      PUBLIC_BASE_URL: 'http://127.0.0.1:8080',
      GATEWAY_HOST: '0.0.0.0',
      LOCAL_IDP_INSECURE: 'false',
    });
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /GATEWAY_HOST=0\.0\.0\.0/);
    assert.match(run.output, /LOCAL_IDP_INSECURE/);
  });

  it('starts with LOCAL_IDP_INSECURE=true, and warns at every start', async () => {
    const insecure = { env: { LOCAL_IDP_INSECURE: 'true' } };
    // startApp answers once auth-service answers its health check over RabbitMQ.
    await stack.startApp('auth-service', insecure);
    await eventually(() => assert.equal(warnings(stack), 1));
    await stack.stopApp('auth-service');
    await stack.startApp('auth-service', insecure);
    await eventually(() => assert.equal(warnings(stack), 2));
    assert.match(stack.logOf('auth-service'), /pgcloud\.example\.com is not a loopback name/);
  });
});
