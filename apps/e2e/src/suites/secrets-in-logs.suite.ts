import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Stack, findSecretsInLogs, seenSecrets } from '@pgcloud/testing';
import { sharedStack } from '../support/shared-stack.js';

/** Runs last: every secret the suites were given must be absent from every app's log. */
describe('the logs of every stack', () => {
  it('hold none of the tokens and device codes handed out', async () => {
    const secrets = seenSecrets();
    assert.ok(secrets.size > 10, `the suites handed out secrets to look for (${secrets.size})`);
    const signatures = [...secrets].filter((secret) => /^[0-9a-f]{64}$/.test(secret));
    assert.ok(signatures.length > 0, 'pre-signed URL signatures are among them');
    const logDirs = Stack.startedLogDirs();
    assert.ok(logDirs.length >= 1);
    // The shared stack still runs (background jobs may log yet): its logs are complete
    // once its apps have stopped. The stack's own stop at the end then finds none running.
    await (await sharedStack()).stopApps();
    const { leaks, bytesScanned } = findSecretsInLogs(logDirs, secrets);
    assert.ok(bytesScanned > 0, 'the apps wrote logs');
    assert.deepEqual(leaks, []);
  });
});
