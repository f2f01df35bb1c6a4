import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { expectData } from '../support/assertions.js';
import { postmasterPid, psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { ownStack } from '../support/shared-stack.js';

/** What the suites below share: their own stack, a reconcile pass every 2 s, a project. */
interface Watched {
  stack: Stack;
  user: SignedIn;
  project: Project;
}

/** Starts a stack of the suite's own before its tests, and stops it after them. */
function watchedStack(login: string): Watched {
  const watched = {} as Watched;
  before(async () => {
    watched.stack = await ownStack({
      RECONCILE_INTERVAL_SECONDS: '2',
      JOB_LEASE_SECONDS: '3',
    });
    watched.user = await signIn(new ApiClient(watched.stack.baseUrl), login);
    watched.project = expectData<Project>(
      await watched.user.api.post('/projects', { name: 'crashes' }),
      201,
    );
  });
  after(async () => {
    await watched.stack?.stop();
  });
  return watched;
}

/** These tests kill the stack's processes. */
describe('the provisioner watching its servers: crashes', () => {
  const w = watchedStack('crash-tester');

  it('finishes or fails a database whose provisioner was killed mid-create, never stuck', async () => {
    expectData(
      await w.user.api.post(`/projects/${w.project.id}/databases`, { name: 'interrupted' }),
      201,
    );
    await sleep(150); // the provisioning job is under way
    await w.stack.stopApp('database-provisioner', 'SIGKILL');
    await w.stack.startApp('database-provisioner');
    const database = await waitForStatus(
      w.user.api,
      w.project.id,
      'interrupted',
      ['running', 'failed'],
      60_000,
    );
    if (database.status === 'failed') assert.ok(database.error, 'a failed database says why');
    else
      assert.equal(
        await psql(
          (
            await w.user.api.get<{ data: { connection_string: string } }>(
              `/projects/${w.project.id}/databases/interrupted/url`,
            )
          ).body.data.connection_string,
          'SELECT 1',
        ),
        '1',
      );

    // No server runs without a record: every server directory belongs to a listed database
    // once the reconciler (every 2 s here) has removed what the killed provisioner left.
    await eventually(async () => {
      const { databases } = expectData<{ databases: Database[] }>(
        await w.user.api.get(`/projects/${w.project.id}/databases`),
        200,
      );
      const known = new Set(databases.map((d) => d.platform_service_id));
      const dataDir = w.stack.env['DATA_DIR'] ?? '';
      const servers = readdirSync(join(dataDir, 'local', 'servers')).filter((name) =>
        name.startsWith('srv_'),
      );
      for (const server of servers) assert.ok(known.has(server), `server ${server} has a record`);
    });
  });

  it('brings back a database server killed with kill -9, data intact', async () => {
    const { database, connection } = await runningDatabase(w.user.api, w.project.id, 'phoenix');
    await psql(
      connection.connection_string,
      'CREATE TABLE survivors (name text); INSERT INTO survivors VALUES ($$ada$$)',
    );
    process.kill(
      postmasterPid(w.stack.env['DATA_DIR'] ?? '', database.platform_service_id),
      'SIGKILL',
    );
    // The reconciler (every 2 s here) starts it again; until then psql fails, and past the
    // bound its last error is thrown.
    await eventually(
      async () =>
        assert.equal(
          await psql(connection.connection_string, 'SELECT name FROM survivors'),
          'ada',
          'the server answers again with its data',
        ),
      { intervalMs: 250 },
    );
  });
});
