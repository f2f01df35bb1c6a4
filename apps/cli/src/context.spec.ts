import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CliContext, DEFAULT_API_URL } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { credentialsPath, writePrivateJsonFile } from './settings-files.js';

function homeWithSignIn(apiUrl: string): NodeJS.ProcessEnv {
  const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'pgcloud-cli-spec-')) };
  writePrivateJsonFile(credentialsPath(env), {
    api_url: apiUrl,
    token: 'pgc_saved',
    saved_at: new Date().toISOString(),
  });
  return env;
}

describe('CliContext', () => {
  it('takes the token from PGCLOUD_TOKEN, then the saved sign-in', () => {
    const env = homeWithSignIn('https://api.example.test');
    assert.equal(new CliContext({}, env).token, 'pgc_saved');
    assert.equal(new CliContext({}, { ...env, PGCLOUD_TOKEN: 'pgc_env' }).token, 'pgc_env');
  });

  it('uses the API of the saved sign-in, and never sends its token to another API', () => {
    const env = homeWithSignIn('https://api.example.test/');
    assert.equal(new CliContext({}, env).apiUrl, 'https://api.example.test');
    const elsewhere = new CliContext({ apiUrl: 'https://other.example.test' }, env);
    assert.equal(elsewhere.token, undefined);
    assert.throws(
      () => elsewhere.api(),
      (error: unknown) =>
        error instanceof CliError &&
        error.exitCode === EXIT.auth &&
        /pgcloud login/.test(error.message),
    );
  });

  it('defaults to the API of `npm run up` when nothing names one', () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'pgcloud-cli-spec-')) };
    assert.equal(new CliContext({}, env).apiUrl, DEFAULT_API_URL);
    assert.equal(
      new CliContext({}, { ...env, PGCLOUD_API_URL: 'http://x:1/' }).apiUrl,
      'http://x:1',
    );
  });

  it('asks for a project when neither --project nor `pgcloud use` chose one', () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'pgcloud-cli-spec-')) };
    assert.throws(
      () => new CliContext({}, env).projectRef,
      (error: unknown) => error instanceof CliError && error.exitCode === EXIT.usage,
    );
  });

  it('keeps the credentials file readable by its owner only', () => {
    const env = homeWithSignIn('https://api.example.test');
    assert.equal(statSync(credentialsPath(env)).mode & 0o777, 0o600);
  });
});
