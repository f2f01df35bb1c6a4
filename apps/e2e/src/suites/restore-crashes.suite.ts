import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CreatedBackup, CreatedRestore, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, signIn } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { waitForRestore } from '../support/restores.js';
import { ownStack } from '../support/shared-stack.js';

const A_ROWS = 1_000_000;
const COUNT_SQL =
  "SELECT count(*) FILTER (WHERE batch = 'A') || '|' || count(*) FILTER (WHERE batch = 'B') FROM rows";

/** A stack of its own: the provisioner is killed mid-restore. */
describe('a restore whose provisioner is killed', () => {
  let stack: Stack;
  let user: SignedIn;
  let project: Project;

  before(async () => {
    stack = await ownStack({ JOB_LEASE_SECONDS: '3', RECONCILE_INTERVAL_SECONDS: '2' });
    user = await signIn(new ApiClient(stack.baseUrl), 'restore-crasher');
    project = expectData<Project>(await user.api.post('/projects', { name: 'crashy' }), 201);
  });

  after(async () => {
    await stack?.stop();
  });

  // Killed once the download has begun, and once the restored data is checked: as the
  // swap begins (the server's files say where the restore is).
  for (const [name, moment] of [
    ['mid-build', 'pgdata.restore'],
    ['mid-swap', join('pgdata.restore', 'pgcloud_restore_checked')],
  ] as const) {
    it(`ends completed or failed, with old or restored data and never a mix (killed ${name})`, async () => {
      const { connection, database } = await runningDatabase(user.api, project.id, name);
      const serverDir = join(stack.dataDir, 'local', 'servers', database.platform_service_id);
      const path = `/projects/${project.id}/databases/${name}`;
      await psql(
        connection.connection_string,
        `CREATE TABLE rows (id serial PRIMARY KEY, batch text NOT NULL, payload text NOT NULL);
         INSERT INTO rows (batch, payload) SELECT 'A', md5(g::text) FROM generate_series(1, ${A_ROWS}) g;`,
        120_000,
      );
      const backup = expectData<CreatedBackup>(await user.api.post(`${path}/backups`), 201);
      await waitForBackup(user.api, `${path}/backups`, backup.id);
      await psql(
        connection.connection_string,
        "INSERT INTO rows (batch, payload) SELECT 'B', 'late' FROM generate_series(1, 10)",
      );
      const created = expectData<CreatedRestore>(
        await user.api.post(`${path}/backups/${backup.id}/restore`),
        201,
      );
      const deadline = Date.now() + 60_000;
      while (!existsSync(join(serverDir, moment))) {
        assert.ok(Date.now() < deadline, `the restore reached ${moment}`);
        await sleep(2);
      }
      await stack.stopApp('database-provisioner', 'SIGKILL');
      await stack.startApp('database-provisioner');

      const restore = await waitForRestore(user.api, path, created.restore_id);
      if (restore.status === 'failed') assert.ok(restore.error, 'a failed restore says why');
      await waitForStatus(user.api, project.id, name, ['running'], 120_000);
      const counts = await psql(connection.connection_string, COUNT_SQL);
      const expected = restore.status === 'completed' ? `${A_ROWS}|0` : `${A_ROWS}|10`;
      assert.equal(counts, expected, `a ${restore.status} restore leaves ${expected}`);
      await psql(
        connection.connection_string,
        "INSERT INTO rows (batch, payload) VALUES ('C', 'writable')",
      );
    });
  }
});
