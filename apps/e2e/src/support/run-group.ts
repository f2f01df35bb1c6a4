import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Stack } from '@pgcloud/devstack';
import { findSecretsInLogs, seenSecrets } from '@pgcloud/testing';
import type { E2eGroup } from '../groups.js';
import { E2E_GROUPS, selectedSuites } from '../groups.js';
import { stopSharedDaemon } from './shared-daemon.js';
import { startedSharedStack, stopSharedStack } from './shared-stack.js';

/**
 * Runs one group of e2e suites in this process: the group's suites (those `npm test --
 * <area>` selected, when it did), then, for a group of the cloud stack, the scan of every
 * log its stacks wrote for the secrets handed out. The shared stack and daemon, started by
 * the first suite that needs them, stop at the end.
 */
export async function runGroup(name: string): Promise<void> {
  const group = E2E_GROUPS.find((candidate) => candidate.name === name);
  if (!group) throw new Error(`no e2e group ${name}`);
  const selected = selectedSuites(process.env['PGCLOUD_E2E_SUITES']);
  for (const suite of group.suites) {
    if (!selected || selected.has(suite)) await import(`../suites/${suite}.suite.js`);
  }
  if (group.scansLogs) describeLogScan(group, selected !== undefined);
  after(async () => {
    await stopSharedStack();
    await stopSharedDaemon();
  });
}

/** Runs last in a group: no secret its suites were given is in any log its stacks wrote. */
function describeLogScan(group: E2eGroup, partial: boolean): void {
  describe(`the logs of every stack of the ${group.name} group`, () => {
    it('hold none of the tokens, device codes and signed links handed out', async () => {
      const secrets = seenSecrets();
      const logDirs = Stack.startedLogDirs();
      // A selection of suites may have started no stack and handed out nothing.
      if (partial && (secrets.size === 0 || logDirs.length === 0)) return;
      assert.ok(secrets.size > 0, 'the suites handed out secrets to look for');
      if (group.downloads && !partial) {
        const signatures = [...secrets].filter((secret) => /^[0-9a-f]{64}$/.test(secret));
        assert.ok(signatures.length > 0, 'pre-signed URL signatures are among them');
      }
      assert.ok(logDirs.length >= 1);
      // The shared stack still runs (background jobs may log yet): its logs are complete
      // once its apps have stopped. The stack's own stop at the end then finds none running.
      await (await startedSharedStack())?.stopApps();
      const { leaks, bytesScanned } = findSecretsInLogs(logDirs, secrets);
      assert.ok(bytesScanned > 0, 'the apps wrote logs');
      assert.deepEqual(leaks, []);
    });
  });
}
