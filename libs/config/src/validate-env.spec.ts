import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
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

  it('reads BROKER_USERS as login=app pairs, refusing any other, naming the variable', () => {
    const users = 'gw-login=api-gateway,pitr-login=pitr-worker';
    assert.equal(validateEnv(CommonEnv, { BROKER_USERS: users }).BROKER_USERS, users);
    assert.throws(
      () => validateEnv(CommonEnv, { BROKER_USERS: 'gw-login=gateway' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.some((p) =>
          /^BROKER_USERS=.*"gw-login=gateway" is not login=app with app one of api-gateway/.test(p),
        ),
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

  describe('settings given as files (<NAME>_FILE)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgcloud-settings-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text, { mode: 0o600 });
      return path;
    };

    it("reads a setting's value from its file, less the final line break", () => {
      const databaseUrl = 'postgres://pgcloud:s3cr3t-pw@db.internal:5432/pgcloud';
      const env = validateEnv(CommonEnv, {
        DATABASE_URL_FILE: file('database-url', `${databaseUrl}\n`),
        RABBITMQ_URL_FILE: file('rabbitmq-url', 'amqp://guest:guest@127.0.0.1:5672'),
        RPC_TIMEOUT_MS: '1500',
      });
      assert.equal(env.DATABASE_URL, databaseUrl);
      assert.equal(env.RABBITMQ_URL, 'amqp://guest:guest@127.0.0.1:5672');
      assert.equal(env.RPC_TIMEOUT_MS, 1500);
    });

    it('checks a value from a file like any other, masking its secrets', () => {
      const path = file('broker-url', 'amqp://guest:hunter2@rabbitmq:5672\n');
      assert.throws(
        () => validateEnv(CommonEnv, { RABBITMQ_URL_FILE: path }),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.doesNotMatch(err.message, /hunter2/);
          assert.match(err.message, /RABBITMQ_URL="amqp:\/\/guest:\*\*\*@rabbitmq:5672"/);
          return true;
        },
      );
    });

    it('refuses a setting given both ways, and a file it cannot read, naming the variable', () => {
      const path = file('database-url-2', 'postgres://a@b/c');
      assert.throws(
        () => validateEnv(CommonEnv, { DATABASE_URL: 'postgres://x@y/z', DATABASE_URL_FILE: path }),
        (err: unknown) =>
          err instanceof ConfigError &&
          /^DATABASE_URL_FILE=.*: DATABASE_URL is set too; set only one$/.test(
            err.problems[0] ?? '',
          ),
      );
      const missing = join(dir, 'no-such-file');
      assert.throws(
        () => validateEnv(CommonEnv, { DATABASE_URL_FILE: missing }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.problems.length === 1 &&
          err.problems[0] === `DATABASE_URL_FILE="${missing}": cannot be read (ENOENT)`,
      );
    });

    it('leaves variables alone that name no setting of the app', () => {
      const env = validateEnv(CommonEnv, { RABBITMQ_CONFIG_FILE: join(dir, 'not-read') });
      assert.equal(env.RABBITMQ_URL, 'amqp://guest:guest@127.0.0.1:5672');
    });
  });

  it('parses id=name pairs', () => {
    assert.deepEqual(parsePairs('local=This host, eu=Europe'), [
      { id: 'local', name: 'This host' },
      { id: 'eu', name: 'Europe' },
    ]);
  });
});
