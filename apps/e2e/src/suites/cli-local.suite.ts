import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  LocalDatabaseDetail,
  LocalDatabaseList,
  LocalSnapshot,
  LocalSnapshotList,
} from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import type { LocalDaemon } from '@pgcloud/devstack';
import { expectData } from '../support/assertions.js';
import { CliUser } from '../support/cli.js';
import { sql } from '../support/local-daemon.js';
import { sharedDaemon } from '../support/shared-daemon.js';

/**
 * `pgcloud local` against the local daemon (docs/api/local-daemon.md and docs/cli.md): the
 * daemon's address and token file as a user's environment names them.
 */
describe('pgcloud local: the daemon from the command line', () => {
  let daemon: LocalDaemon;
  let api: ApiClient;
  let user: CliUser;

  before(async () => {
    daemon = await sharedDaemon();
    api = await daemon.api();
    user = new CliUser('http://127.0.0.1:9', {
      PGCLOUD_DAEMON_URL: daemon.baseUrl,
      DAEMON_TOKEN_FILE: daemon.env['DAEMON_TOKEN_FILE'] ?? '',
    });
  });

  it('creates from a template, lists, shows and deletes, answering --json as the daemon does', async () => {
    const template = await user.json<LocalDatabaseDetail>(['local', 'create', 'cli-template']);
    assert.deepEqual(
      unsized(template),
      unsized(expectData(await api.get('/databases/cli-template'), 200)),
    );
    await sql(
      template.connection.connectionString,
      'CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)',
    );

    const copy = await user.json<LocalDatabaseDetail>([
      'local',
      'create',
      'cli-copy',
      '--template',
      'cli-template',
    ]);
    assert.equal(copy.tables, 1);
    assert.deepEqual(unsized(copy), unsized(expectData(await api.get('/databases/cli-copy'), 200)));
    const rows = await sql<{ n: number }>(copy.connection.connectionString, 'SELECT n FROM kept');
    assert.deepEqual(rows, [{ n: 7 }]);
    assert.deepEqual(unsized(await user.json(['local', 'get', 'cli-copy'])), unsized(copy));
    const listed = await user.json<LocalDatabaseList>(['local', 'list']);
    const fromDaemon = expectData<LocalDatabaseList>(await api.get('/databases'), 200);
    assert.deepEqual(
      { ...listed, databases: listed.databases.map(unsized) },
      { ...fromDaemon, databases: fromDaemon.databases.map(unsized) },
    );

    for (const name of ['cli-copy', 'cli-template'])
      assert.deepEqual(await user.json(['local', 'delete', name]), { name, deleted: true });
    const missing = await user.run(['local', 'get', 'cli-copy']);
    assert.equal(missing.code, 4, missing.stderr);
  });

  it('snapshots a database, lists its snapshots and resets it to one', async () => {
    const db = await user.json<LocalDatabaseDetail>(['local', 'create', 'cli-snapped']);
    const url = db.connection.connectionString;
    await sql(url, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)');
    const taken = await user.json<LocalSnapshot>(['local', 'snapshot', 'cli-snapped', 'one']);
    assert.deepEqual(
      { name: taken.name, database: taken.database },
      { name: 'one', database: 'cli-snapped' },
    );
    const listed = await user.json<LocalSnapshotList>(['local', 'snapshots', 'cli-snapped']);
    assert.deepEqual(listed, expectData(await api.get('/databases/cli-snapped/snapshots'), 200));
    await sql(url, 'INSERT INTO kept VALUES (2)');
    const reset = await user.run(['local', 'reset', 'cli-snapped', 'one']);
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal(reset.stdout, 'Local database cli-snapped is back at snapshot one.\n');
    assert.deepEqual(await sql(url, 'SELECT n FROM kept'), [{ n: 1 }]);
    const unknown = await user.run(['local', 'reset', 'cli-snapped', 'two']);
    assert.equal(unknown.code, 4, unknown.stderr);
    await user.json(['local', 'delete', 'cli-snapped']);
  });

  it('exits 3 without the token file and 6 when no daemon answers', async () => {
    const noToken = await user.run(['local', 'list'], {
      DAEMON_TOKEN_FILE: '/nonexistent/daemon.token',
    });
    assert.equal(noToken.code, 3, noToken.stderr);
    const down = await user.run(['local', 'list'], { PGCLOUD_DAEMON_URL: 'http://127.0.0.1:9' });
    assert.equal(down.code, 6, down.stderr);
  });
});

/** A database's fields but its size, which the daemon measures anew at each answer. */
function unsized<T>(database: T): Omit<T, 'size'> {
  const { size: _size, ...rest } = database as T & { size?: unknown };
  return rest;
}
