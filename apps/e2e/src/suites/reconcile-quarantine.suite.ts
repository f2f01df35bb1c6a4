import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { psql, runningDatabase, waitUntilClosed } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { ownStack, uniqueLogin } from '../support/shared-stack.js';

// Issue 17, item 3: the reconciler never deletes data it cannot account for. A server
// without a record is stopped and quarantined, and deleted only after the grace period;
// more strays at once than QUARANTINE_MAX_SERVERS is taken for the wrong metadata database.

const GRACE_SECONDS = 12;

/** Runs SQL on a metadata database (the operator's view, not the API's). */
async function onMetadata(url: string, sql: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

describe('reconcile: servers without a record are quarantined, never deleted at once', () => {
  let stack: Stack;
  let user: SignedIn;
  let project: Project;
  const servers = new Map<string, { serverId: string; url: string; port: number }>();

  before(async () => {
    stack = await ownStack({
      RECONCILE_INTERVAL_SECONDS: '2',
      QUARANTINE_GRACE_SECONDS: String(GRACE_SECONDS),
      QUARANTINE_MAX_SERVERS: '1',
    });
    user = await signIn(new ApiClient(stack.baseUrl), uniqueLogin('strays'));
    project = expectData<Project>(await user.api.post('/projects', { name: 'strays' }), 201);
    for (const name of ['kept', 'stray']) {
      const { database, connection } = await runningDatabase(user.api, project.id, name);
      await psql(
        connection.connection_string,
        `CREATE TABLE t (v text); INSERT INTO t VALUES ('${name}')`,
      );
      servers.set(name, {
        serverId: database.platform_service_id,
        url: connection.connection_string,
        port: connection.port,
      });
    }
  });

  after(async () => {
    await stack?.stop();
  });

  const serversDir = () => join(stack.dataDir, 'local', 'servers');
  const quarantineDir = () => join(stack.dataDir, 'local', 'quarantine');
  const quarantined = () => (existsSync(quarantineDir()) ? readdirSync(quarantineDir()) : []);

  it('with an empty metadata database, deletes no server and logs the refusal', async () => {
    const metadata = new URL(stack.env['DATABASE_URL'] ?? '');
    const empty = new URL(metadata);
    empty.pathname = `${metadata.pathname}_empty`;
    await stack.stopApp('database-provisioner');
    try {
      await stack.startApp('database-provisioner', {
        name: 'provisioner-on-empty',
        env: { DATABASE_URL: empty.toString() },
      });
      await eventually(() =>
        assert.match(
          stack.logOf('provisioner-on-empty'),
          /2 servers have no record .*none is touched/,
        ),
      );
      // Several passes later, still nothing touched.
      await sleep(5000);
      assert.match(stack.logOf('provisioner-on-empty'), /none is touched[\s\S]*none is touched/);
      for (const [name, server] of servers) {
        assert.ok(existsSync(join(serversDir(), server.serverId)), `${name}'s files are there`);
        assert.equal(await psql(server.url, 'SELECT v FROM t'), name, `${name} still answers`);
      }
      assert.deepEqual(quarantined(), []);
    } finally {
      await stack.stopApp('provisioner-on-empty');
      empty.pathname = '/postgres';
      await onMetadata(
        empty.toString(),
        `DROP DATABASE IF EXISTS "${decodeURIComponent(metadata.pathname.slice(1))}_empty" WITH (FORCE)`,
      );
      await stack.startApp('database-provisioner');
    }
  });

  it('quarantines a single stray server, and deletes it only after the grace period', async () => {
    const stray = servers.get('stray');
    const kept = servers.get('kept');
    assert.ok(stray && kept);
    // As if the metadata database came back from a backup older than this database.
    await onMetadata(
      stack.env['DATABASE_URL'] ?? '',
      'DELETE FROM provisioner.databases WHERE platform_service_id = $1',
      [stray.serverId],
    );
    await eventually(() => {
      const entry = quarantined().find((name) => name.startsWith(`${stray.serverId}@`));
      assert.ok(entry, 'the stray is in quarantine');
      assert.ok(!existsSync(join(serversDir(), stray.serverId)), 'and gone from the servers');
    });
    const setAsideAt = Number(
      quarantined()
        .find((name) => name.startsWith(`${stray.serverId}@`))
        ?.split('@')[1],
    );
    await waitUntilClosed(stray.port);
    // The line may still be on its way through the app's pipe when the files have moved.
    await eventually(() =>
      assert.match(
        stack.logOf('database-provisioner'),
        new RegExp(`server ${stray.serverId} has no record: stopped and quarantined`),
      ),
    );
    // Its data is whole in quarantine, and the database with a record is untouched.
    assert.ok(
      existsSync(join(quarantineDir(), `${stray.serverId}@${setAsideAt}`, 'pgdata', 'PG_VERSION')),
    );
    assert.equal(await psql(kept.url, 'SELECT v FROM t'), 'kept');
    expectError(
      await user.api.get(`/projects/${project.id}/databases/stray`),
      404,
      'DATABASE_NOT_FOUND',
    );

    // Passes run every 2 s: before the grace period ends, it stays.
    await sleep(Math.max(0, setAsideAt + (GRACE_SECONDS - 8) * 1000 - Date.now()));
    assert.ok(
      quarantined().some((name) => name.startsWith(`${stray.serverId}@`)),
      'kept during grace',
    );
    await eventually(
      () =>
        assert.ok(!quarantined().some((name) => name.startsWith(`${stray.serverId}@`)), 'deleted'),
      { timeoutMs: 120_000 },
    );
    assert.ok(Date.now() - setAsideAt >= GRACE_SECONDS * 1000, 'not before its grace period');
    await eventually(() =>
      assert.match(
        stack.logOf('database-provisioner'),
        new RegExp(`quarantined server ${stray.serverId} deleted`),
      ),
    );
    assert.equal(await psql(kept.url, 'SELECT v FROM t'), 'kept');
  });
});
