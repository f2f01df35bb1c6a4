import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '@pgcloud/config';
import { loadConfig } from './config.js';

describe('auth-service config', () => {
  it('defaults to the local provider and the public GitHub endpoints', () => {
    const config = loadConfig({});
    assert.equal(config.IDENTITY_PROVIDER, 'local');
    assert.equal(config.GITHUB_CLIENT_ID, undefined);
    assert.equal(config.GITHUB_BASE_URL, 'https://github.com');
    assert.equal(config.GITHUB_API_URL, 'https://api.github.com');
  });

  it('needs GITHUB_CLIENT_ID with the github provider, and names it', () => {
    assert.throws(
      () => loadConfig({ IDENTITY_PROVIDER: 'github' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 1 &&
        err.problems.some((p) => p.startsWith('GITHUB_CLIENT_ID=')),
    );
    const config = loadConfig({ IDENTITY_PROVIDER: 'github', GITHUB_CLIENT_ID: 'Iv1.abc123' });
    assert.equal(config.GITHUB_CLIENT_ID, 'Iv1.abc123');
  });

  it('refuses unknown providers and GitHub URLs that are not http(s)', () => {
    assert.throws(() => loadConfig({ IDENTITY_PROVIDER: 'gitlab' }), ConfigError);
    assert.throws(
      () =>
        loadConfig({
          IDENTITY_PROVIDER: 'github',
          GITHUB_CLIENT_ID: 'x',
          GITHUB_API_URL: 'ftp://x',
        }),
      (err: unknown) =>
        err instanceof ConfigError && err.problems.some((p) => p.startsWith('GITHUB_API_URL=')),
    );
  });

  it('reads LOCAL_IDP_INSECURE as true or false only, false by default', () => {
    assert.equal(loadConfig({}).LOCAL_IDP_INSECURE, false);
    assert.equal(loadConfig({ LOCAL_IDP_INSECURE: 'false' }).LOCAL_IDP_INSECURE, false);
    assert.equal(loadConfig({ LOCAL_IDP_INSECURE: 'true' }).LOCAL_IDP_INSECURE, true);
    assert.throws(
      () => loadConfig({ LOCAL_IDP_INSECURE: 'yes' }),
      (err: unknown) =>
        err instanceof ConfigError && err.problems.some((p) => p.startsWith('LOCAL_IDP_INSECURE=')),
    );
  });

  it('reads the gateway address and the sweep interval, and names bad ones', () => {
    const config = loadConfig({});
    assert.equal(config.GATEWAY_HOST, '127.0.0.1');
    assert.equal(config.AUTH_SWEEP_INTERVAL_SECONDS, 3600);
    assert.equal(loadConfig({ GATEWAY_HOST: '0.0.0.0' }).GATEWAY_HOST, '0.0.0.0');
    assert.equal(loadConfig({ AUTH_SWEEP_INTERVAL_SECONDS: '60' }).AUTH_SWEEP_INTERVAL_SECONDS, 60);
    for (const bad of ['0', '-5', 'hourly', '1.5'])
      assert.throws(
        () => loadConfig({ AUTH_SWEEP_INTERVAL_SECONDS: bad }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.problems.some((p) => p.startsWith('AUTH_SWEEP_INTERVAL_SECONDS=')),
        bad,
      );
    assert.throws(
      () => loadConfig({ GATEWAY_HOST: 'not a host' }),
      (err: unknown) =>
        err instanceof ConfigError && err.problems.some((p) => p.startsWith('GATEWAY_HOST=')),
    );
  });
});
