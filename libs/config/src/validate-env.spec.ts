import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommonEnv } from './common-env.js';
import { ConfigError, parsePairs, shownValue, validateEnv } from './validate-env.js';

describe('validateEnv', () => {
  it('applies defaults and converts numbers', () => {
    const env = validateEnv(CommonEnv, { RPC_TIMEOUT_MS: '1500' });
    assert.equal(env.RPC_TIMEOUT_MS, 1500);
    assert.equal(env.RABBITMQ_URL, 'amqp://guest:guest@127.0.0.1:5672');
  });

  it("refuses the broker's guest login beyond loopback, naming RABBITMQ_URL", () => {
    for (const url of [
      'amqp://guest:guest@rabbitmq:5672',
      'amqps://guest:guest@broker.example.com:5671/pgcloud',
      'amqp://rabbitmq:5672', // no login: amqplib logs in as guest
      'amqp://gu%65st:guest@10.0.0.5',
    ])
      assert.throws(
        () => validateEnv(CommonEnv, { RABBITMQ_URL: url }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.problems.length === 1 &&
          /^RABBITMQ_URL=.*: logs in as guest to a broker beyond this machine/.test(
            err.problems[0] ?? '',
          ),
        url,
      );
    for (const url of [
      'amqp://guest:guest@127.0.0.1:5672',
      'amqp://guest:guest@localhost',
      'amqp://guest:guest@[::1]:5672',
      'amqp://127.0.0.1',
      'amqp://backup-service:s3cret@rabbitmq:5672/pgcloud',
    ])
      assert.equal(validateEnv(CommonEnv, { RABBITMQ_URL: url }).RABBITMQ_URL, url);
  });

  it('names the variable at fault', () => {
    assert.throws(
      () => validateEnv(CommonEnv, { RPC_TIMEOUT_MS: 'soon', DATABASE_URL: 'mysql://x' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.some((p) => p.startsWith('RPC_TIMEOUT_MS=')) &&
        err.problems.some((p) => p.startsWith('DATABASE_URL=')),
    );
  });

  it('masks secrets in what it names: URL passwords, and secret settings whole', () => {
    assert.throws(
      () =>
        validateEnv(CommonEnv, {
          DATABASE_URL: 'mysql://pgcloud:s3cr3t-pw@db.internal:5432/pgcloud',
          RABBITMQ_URL: 'not a url, but amqp://guest:hunter2@broker',
        }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.doesNotMatch(err.message, /s3cr3t-pw|hunter2/);
        assert.match(err.message, /DATABASE_URL="mysql:\/\/pgcloud:\*\*\*@db\.internal:5432/);
        return true;
      },
    );
    assert.equal(shownValue('S3_SECRET_ACCESS_KEY', 'abc/def'), '(secret, 7 characters)');
    assert.equal(shownValue('ENCRYPTION_KEY', 'xyz'), '(secret, 3 characters)');
    assert.equal(shownValue('GITHUB_CLIENT_ID', 'Iv1.abc'), '"Iv1.abc"');
    assert.equal(shownValue('DAEMON_TOKEN_FILE', '/run/token'), '"/run/token"');
    assert.equal(shownValue('PORT', undefined), 'null');
  });

  it('parses id=name pairs', () => {
    assert.deepEqual(parsePairs('local=This host, eu=Europe'), [
      { id: 'local', name: 'This host' },
      { id: 'eu', name: 'Europe' },
    ]);
  });
});
