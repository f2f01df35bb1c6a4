import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Stack, seenSecrets } from '@pgcloud/testing';

/** Runs last: every secret the suites were given must be absent from every app's log. */
describe('the logs of every stack', () => {
  it('hold none of the tokens and device codes handed out', () => {
    const secrets = seenSecrets();
    assert.ok(secrets.size > 10, `the suites handed out secrets to look for (${secrets.size})`);
    const logDirs = Stack.startedLogDirs();
    assert.ok(logDirs.length >= 1);
    let scanned = 0;
    for (const dir of logDirs) {
      for (const file of readdirSync(dir)) {
        const text = readFileSync(join(dir, file), 'utf8');
        scanned += text.length;
        for (const secret of secrets) {
          assert.ok(
            !text.includes(secret),
            `${file} of ${dir} contains a secret (${secret.slice(0, 6)}…)`,
          );
        }
      }
    }
    assert.ok(scanned > 0, 'the apps wrote logs');
  });
});
