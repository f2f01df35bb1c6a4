import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { postmasterPid, psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { ownStack } from '../support/shared-stack.js';

/** Database- and role-level settings of a server that name a read-only setting. */
const READ_ONLY_OVERRIDES =
  "SELECT count(*) FROM pg_db_role_setting WHERE setconfig::text LIKE '%read_only%'";

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

/** About 1.15 GB written past a 1 GiB limit: a suite, and a stack, of its own. */
describe('the provisioner watching its servers: the storage limit', () => {
  const w = watchedStack('limit-tester');

  it('turns a database read-only at its storage limit, and writable again below it', async () => {
    const { user, project } = w;
    const { connection } = await runningDatabase(user.api, project.id, 'filling', {
      cpu: 1,
      memory: 1,
      storage: 1,
    });
    const url = connection.connection_string;
    // About 1.15 GB of rows too short to be compressed: past the 1 GiB limit.
    await psql(
      url,
      'CREATE TABLE filler (payload text); ' +
        'INSERT INTO filler SELECT repeat(chr(65 + i % 26), 1900) FROM generate_series(1, 600000) i',
      300_000,
    );
    await eventually(
      () =>
        assert.rejects(psql(url, "INSERT INTO filler VALUES ('more')"), /read-only transaction/),
      { intervalMs: 500 },
    );
    assert.equal(await psql(url, 'SELECT count(*) > 0 FROM filler'), 't', 'reads still work');
    const shown = expectData<Database>(
      await user.api.get(`/projects/${project.id}/databases/filling`),
      200,
    ).storage;
    assert.equal(shown.state, 'read_only', 'past the limit, within the grace: read-only');
    assert.ok(shown.used_bytes >= shown.limit_bytes, JSON.stringify(shown));
    assert.equal(await psql(url, 'SHOW temp_file_limit'), '1GB', 'temp files capped at 1 GiB');

    // Settings that would lift the limit for new sessions are reset within a reconcile pass.
    for (const lift of [
      'ALTER DATABASE filling SET default_transaction_read_only = off',
      'ALTER ROLE filling SET default_transaction_read_only = off',
      'ALTER ROLE filling IN DATABASE filling SET default_transaction_read_only = off',
      'ALTER DATABASE filling SET transaction_read_only = off',
    ]) {
      await psql(url, `BEGIN READ WRITE; ${lift}; COMMIT`);
      await eventually(
        async () => {
          assert.equal(await psql(url, READ_ONLY_OVERRIDES), '0', lift);
          await assert.rejects(
            psql(url, "INSERT INTO filler VALUES ('lifted')"),
            /read-only transaction/,
          );
        },
        { intervalMs: 500 },
      );
    }

    // The owner may open a read-write transaction of its own to make room.
    await psql(url, 'BEGIN READ WRITE; TRUNCATE filler; COMMIT');
    await eventually(() => psql(url, "INSERT INTO filler VALUES ('again')"), { intervalMs: 500 });
  });
});
