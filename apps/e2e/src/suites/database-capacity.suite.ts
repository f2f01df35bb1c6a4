import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { CreatedBackup, Database, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase, serverDirs } from '../support/databases.js';
import { ownStack } from '../support/shared-stack.js';

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Two neighbouring free ports above the ranges isolated stacks draw from (21000-28999). */
async function twoFreePorts(): Promise<number> {
  for (;;) {
    const first = 29_000 + Math.floor(Math.random() * 990);
    if ((await canListen(first)) && (await canListen(first + 1))) return first;
  }
}

/** Server processes (postmasters) running on data directories under `dataDir`. */
async function postmastersUnder(dataDir: string): Promise<number> {
  const { stdout } = await promisify(execFile)('ps', ['-eo', 'args=']);
  return stdout.split('\n').filter((line) => / -D /.test(line) && line.includes(dataDir)).length;
}

/** A stack of its own whose provisioner has two ports: room for two servers. */
describe('a deployment without room for another server', () => {
  let stack: Stack;
  let user: SignedIn;
  let project: Project;
  let databasesPath: string;

  before(async () => {
    const first = await twoFreePorts();
    stack = await ownStack({ DATABASE_PORT_RANGE: `${first}-${first + 1}` });
    user = await signIn(new ApiClient(stack.baseUrl), 'capacity-tester');
    project = expectData<Project>(await user.api.post('/projects', { name: 'full-house' }), 201);
    databasesPath = `/projects/${project.id}/databases`;
  });

  after(async () => {
    await stack?.stop();
  });

  async function names(): Promise<string[]> {
    const { databases } = expectData<{ databases: Database[] }>(
      await user.api.get(databasesPath),
      200,
    );
    return databases.map((d) => d.name).sort();
  }

  /** Nothing of a refused create anywhere: no record (of any status), no data, no server. */
  async function assertNothingMadeBeyond(expected: string[]): Promise<void> {
    assert.deepEqual(await names(), expected);
    const metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
    try {
      const { rows } = await metadata.query<{ name: string }>(
        'SELECT name FROM provisioner.databases ORDER BY name',
      );
      assert.deepEqual(
        rows.map((row) => row.name),
        expected,
      );
    } finally {
      await metadata.end();
    }
    const dataDir = stack.env['DATA_DIR'] ?? '';
    assert.equal(serverDirs(dataDir).length, expected.length, 'data directories');
    assert.equal(await postmastersUnder(dataDir), expected.length, 'server processes');
  }

  it('answers 503 for a third database and creates nothing; the first two work on', async () => {
    const first = await runningDatabase(user.api, project.id, 'first');
    const second = await runningDatabase(user.api, project.id, 'second');

    const refused = expectError(
      await user.api.post(databasesPath, { name: 'third' }),
      503,
      'SERVICE_UNAVAILABLE',
    );
    assert.match(refused.message, /no room for another database server/);
    await assertNothingMadeBeyond(['first', 'second']);

    // A restore into a new database needs a server too.
    const backupsPath = `${databasesPath}/first/backups`;
    const backup = expectData<CreatedBackup>(await user.api.post(backupsPath), 201);
    assert.equal((await waitForBackup(user.api, backupsPath, backup.id)).status, 'completed');
    expectError(
      await user.api.post(`${backupsPath}/${backup.id}/restore`, { target_database: 'copy' }),
      503,
      'SERVICE_UNAVAILABLE',
    );
    await assertNothingMadeBeyond(['first', 'second']);

    for (const { connection } of [first, second])
      assert.equal(await psql(connection.connection_string, 'SELECT 1'), '1');

    // Once a server is gone, its port serves the name that was refused.
    expectData(await user.api.delete(`${databasesPath}/second`), 200);
    await eventually(async () => {
      const response = await user.api.post(databasesPath, { name: 'third' });
      expectData(response, 201);
    });
    await eventually(async () => {
      const third = expectData<Database>(await user.api.get(`${databasesPath}/third`), 200);
      assert.equal(third.status, 'running');
    });
    assert.deepEqual(await names(), ['first', 'third']);
  });
});
