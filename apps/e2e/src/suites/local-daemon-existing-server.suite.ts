import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LocalDatabaseDetail, LocalDatabaseList } from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { LocalDaemon, loadLauncherEnv } from '@pgcloud/devstack';
import { expectData, expectError } from '../support/assertions.js';
import { sql } from '../support/local-daemon.js';

/**
 * A daemon over the machine's own PostgreSQL (DATABASE_URL's server, trust on
 * 127.0.0.1), as DAEMON_DATABASE_URL names it: a role, a catalogue and databases of this
 * run's own, all dropped at the end.
 */
describe('local daemon: an existing server named by a URL', () => {
  const run = randomBytes(4).toString('hex');
  const role = `pgcloud_e2e_${run}`;
  const catalogue = `pgcloud_daemon_e2e_${run}`;
  const prefix = `e2e-${run}`;
  const superuserUrl = new URL(loadLauncherEnv().DATABASE_URL);
  superuserUrl.pathname = '/postgres';
  let daemon: LocalDaemon | undefined;
  let api: ApiClient;

  before(async () => {
    await sql(superuserUrl.toString(), `CREATE ROLE "${role}" LOGIN CREATEDB`);
    const daemonUrl = new URL(superuserUrl);
    daemonUrl.username = role;
    daemonUrl.password = '';
    daemon = await LocalDaemon.start('existing-server', {
      DAEMON_DATABASE_URL: daemonUrl.toString(),
      DAEMON_CATALOG_DATABASE: catalogue,
    });
    api = await daemon.api();
  });

  after(async () => {
    await daemon?.stop();
    const leftovers = await sql<{ datname: string }>(
      superuserUrl.toString(),
      'SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2',
      [`${prefix}%`, catalogue],
    );
    for (const { datname } of leftovers)
      await sql(superuserUrl.toString(), `DROP DATABASE "${datname}" WITH (FORCE)`);
    await sql(superuserUrl.toString(), `DROP ROLE IF EXISTS "${role}"`);
  });

  it("creates, copies, lists and deletes databases there as the URL's role", async () => {
    const base = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: `${prefix}-base` }),
      201,
    );
    assert.equal(base.connection.user, role);
    assert.equal(base.connection.port, Number(superuserUrl.port || 5432));
    await sql(
      base.connection.connectionString,
      'CREATE TABLE notes (body text); INSERT INTO notes VALUES ($$kept$$)',
    );
    const copy = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: `${prefix}-copy`, template: `${prefix}-base` }),
      201,
    );
    assert.equal(copy.tables, 1);
    const rows = await sql<{ body: string; owner: string }>(
      copy.connection.connectionString,
      `SELECT body, (SELECT pg_get_userbyid(datdba) FROM pg_database
                     WHERE datname = current_database()) AS owner FROM notes`,
    );
    assert.deepEqual(rows, [{ body: 'kept', owner: role }]);

    const { databases } = expectData<LocalDatabaseList>(await api.get('/databases'), 200);
    const ours = databases.filter((database) => database.name.startsWith(prefix));
    assert.deepEqual(
      ours.map((database) => [database.name, database.tableCount]),
      [
        [`${prefix}-base`, 1],
        [`${prefix}-copy`, 1],
      ],
    );
    for (const hidden of ['postgres', 'template0', 'template1', catalogue])
      assert.ok(!databases.some((database) => database.name === hidden), hidden);
    expectError(await api.get(`/databases/${catalogue}`), 404, 'DATABASE_NOT_FOUND');
    expectError(await api.post('/databases', { name: catalogue }), 409, 'DATABASE_NAME_TAKEN');

    for (const name of [`${prefix}-copy`, `${prefix}-base`])
      expectData(await api.delete(`/databases/${name}`), 200);
    const remaining = await sql(
      superuserUrl.toString(),
      'SELECT 1 FROM pg_database WHERE datname LIKE $1',
      [`${prefix}%`],
    );
    assert.equal(remaining.length, 0);
  });
});
