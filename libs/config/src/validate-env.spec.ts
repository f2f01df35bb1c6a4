import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommonEnv } from './common-env.js';
import { ConfigError, parsePairs, validateEnv } from './validate-env.js';

describe('validateEnv', () => {
  it('applies defaults and converts numbers', () => {
    const env = validateEnv(CommonEnv, { RPC_TIMEOUT_MS: '1500' });
    assert.equal(env.RPC_TIMEOUT_MS, 1500);
    assert.equal(env.RABBITMQ_URL, 'amqp://guest:guest@127.0.0.1:5672');
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

  it('parses id=name pairs', () => {
    assert.deepEqual(parsePairs('local=This host, eu=Europe'), [
      { id: 'local', name: 'This host' },
      { id: 'eu', name: 'Europe' },
    ]);
  });
});
