import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Database, Project, PitrConfig } from '@pgcloud/contracts';
import { ApiClient, WORKSPACE_ROOT, submitDeviceForm } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { CliUser, RunningCli } from '../support/cli.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

/** The shell block under the README's "Quick start with the command line" heading. */
export function quickStartBlock(readme: string): string {
  const section = readme.split(/^## /m).find((part) => part.startsWith('Quick start with the'));
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'the README has a quick start with the command line');
  return block;
}

/**
 * The README's quick start with the command line, run as written: its block in one bash,
 * from the checkout, `npx pgcloud` and all, as a new user on the shared stack. `login`
 * waits for a person, so the suite approves the code it prints on the page.
 */
describe("the README's quick start", () => {
  it('runs as written, and leaves what it says', async () => {
    const stack = await sharedStack();
    const user = new CliUser(stack.baseUrl);
    const block = quickStartBlock(readFileSync(join(WORKSPACE_ROOT, 'README.md'), 'utf8'));
    assert.match(block, /^npx pgcloud login/, 'it starts by signing in');
    const running = new RunningCli(
      spawn('bash', ['-euo', 'pipefail', '-c', block], {
        cwd: WORKSPACE_ROOT,
        env: user.env(),
      }),
    );
    const [, code] = await running.stderrMatch(
      /enter the code ([B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4})/,
      60_000,
    );
    assert.ok(code);
    const login = uniqueLogin('readme');
    const page = await submitDeviceForm(await newClient(), {
      user_code: code,
      login,
      action: 'approve',
    });
    assert.equal(page.status, 200);
    assert.equal(await running.exited, 0, `${running.stdout}\n${running.stderr}`);

    // What the block said it did: the copy holds the row, PITR is on, both are listed.
    assert.match(running.stdout, /^\s*kept$/m, 'the restored copy answered its row');
    const { token } = JSON.parse(readFileSync(user.credentialsFile, 'utf8')) as { token: string };
    const api = new ApiClient(stack.baseUrl, token);
    const { projects } = expectData<{ projects: Project[] }>(await api.get('/projects'), 200);
    const project = projects.find((listed) => listed.name === 'shop-backend');
    assert.ok(project, 'the project was made');
    const path = `/projects/${project.id}/databases`;
    const { databases } = expectData<{ databases: Database[] }>(await api.get(path), 200);
    assert.deepEqual(databases.map((database) => [database.name, database.status]).sort(), [
      ['shop', 'running'],
      ['shop-copy', 'running'],
    ]);
    const pitr = expectData<PitrConfig>(await api.get(`${path}/shop/pitr/config`), 200);
    assert.equal(pitr.enabled, true);
    assert.equal(pitr.retention_days, 7);
  });
});
