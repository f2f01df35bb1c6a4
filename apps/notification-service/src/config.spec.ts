import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError } from '@pgcloud/config';
import { loadConfig } from './config.js';

const KEY = randomBytes(32).toString('base64');

/** The problems a ConfigError names, or a failure when the settings load. */
function problems(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return assert.fail('the settings were accepted');
}

describe('notification-service settings', () => {
  it('refuses to start without ENCRYPTION_KEY, or with one that is not 32 bytes', () => {
    for (const env of [
      {},
      { ENCRYPTION_KEY: 'short' },
      { ENCRYPTION_KEY: randomBytes(16).toString('base64') },
    ]) {
      const [problem, ...others] = problems(env);
      assert.deepEqual(others, []);
      assert.match(
        problem ?? '',
        /^ENCRYPTION_KEY=.*: must be set to 32 random bytes, base64-encoded/,
      );
      assert.ok(!problem?.includes(env.ENCRYPTION_KEY ?? '(none)'), 'the value is not shown');
    }
    assert.equal(loadConfig({ ENCRYPTION_KEY: KEY }).ENCRYPTION_KEY, KEY);
  });

  it('reads WEBHOOK_ALLOW_PRIVATE_TARGETS as true or false only', () => {
    assert.equal(loadConfig({ ENCRYPTION_KEY: KEY }).WEBHOOK_ALLOW_PRIVATE_TARGETS, false);
    const off = loadConfig({ ENCRYPTION_KEY: KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    assert.equal(off.WEBHOOK_ALLOW_PRIVATE_TARGETS, false);
    const on = loadConfig({ ENCRYPTION_KEY: KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    assert.equal(on.WEBHOOK_ALLOW_PRIVATE_TARGETS, true);
    assert.match(
      problems({ ENCRYPTION_KEY: KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' })[0] ?? '',
      /WEBHOOK_ALLOW_PRIVATE_TARGETS="yes": must be true or false/,
    );
  });

  it('reads the durations and the limits by tier', () => {
    const config = loadConfig({ ENCRYPTION_KEY: KEY });
    assert.equal(config.orderWaitMs, 10 * 60_000);
    assert.equal(config.disableAfterMs, 3 * 86_400_000);
    assert.equal(config.secretOverlapMs, 24 * 3_600_000);
    assert.deepEqual(config.webhookLimits, { free: 2, pro: 20 });
    assert.match(
      problems({ ENCRYPTION_KEY: KEY, WEBHOOK_ORDER_WAIT: '10 minutes' })[0] ?? '',
      /WEBHOOK_ORDER_WAIT/,
    );
  });
});
