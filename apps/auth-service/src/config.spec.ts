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
});
