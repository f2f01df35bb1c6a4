import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { ConnectionDetails, Database, Project } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import type { SignedIn } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { psql, runningDatabase, serverStarts, waitForStatus } from '../support/databases.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

/**
 * Resizing a database on the local driver (docs/api/databases.md#resizing): `resizing`,
 * then `running` on one restart with the new settings, its data intact; less storage only
 * while the data fits; the tier's bounds; nothing changed by a refused resize.
 */
describe('resizing a database', () => {
  let stack: Stack;
  let pro: SignedIn;
  let project: Project;
  let connection: ConnectionDetails;
  let serverId: string;
  const path = () => `/projects/${project.id}/databases/shop`;
  const dataDir = () => stack.env['DATA_DIR'] ?? '';
  const settings = (names: string[]) =>
    psql(
      connection.connection_string,
      `SELECT string_agg(current_setting(name), ',' ORDER BY ord)
         FROM unnest(ARRAY['${names.join("','")}']) WITH ORDINALITY AS s(name, ord)`,
    );

  before(async () => {
    stack = await sharedStack();
    const login = uniqueLogin('resizer');
    await signIn(await newClient(), login);
    await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
    // Signed in again: the tier rides in the token.
    pro = await signIn(await newClient(), login);
    project = expectData<Project>(await pro.api.post('/projects', { name: 'resizes' }), 201);
    let database: Database;
    ({ database, connection } = await runningDatabase(pro.api, project.id, 'shop'));
    serverId = database.platform_service_id;
    await psql(
      connection.connection_string,
      "CREATE TABLE orders (id int PRIMARY KEY, item text); INSERT INTO orders SELECT g, 'item ' || g FROM generate_series(1, 1000) g",
    );
  });

  it('resizes up on one restart: resizing, then running with the new settings, data intact', async () => {
    assert.equal(await settings(['shared_buffers', 'max_parallel_workers']), '256MB,2');
    const starts = serverStarts(dataDir(), serverId);
    const session = new pg.Client({
      connectionString: connection.connection_string.replace('sslmode=require', ''),
      ssl: { rejectUnauthorized: false },
    });
    await session.connect();
    session.on('error', () => undefined);
    try {
      const resizing = expectData<Database>(
        await pro.api.patch(path(), { config: { cpu: 4, memory: 2 } }),
        200,
      );
      assert.equal(resizing.status, 'resizing');
      assert.deepEqual(resizing.config, { cpu: 4, memory: 2, storage: 10 });
      // Asked again while it applies: not now.
      expectError(
        await pro.api.patch(path(), { config: { memory: 3 } }),
        409,
        'DATABASE_NOT_READY',
      );
      const running = await waitForStatus(pro.api, project.id, 'shop', ['running']);
      assert.deepEqual(running.config, { cpu: 4, memory: 2, storage: 10 });
      assert.equal(await settings(['shared_buffers', 'max_parallel_workers']), '512MB,4');
      assert.equal(await psql(connection.connection_string, 'SELECT count(*) FROM orders'), '1000');
      assert.equal(serverStarts(dataDir(), serverId), starts + 1, 'one restart');
      await assert.rejects(session.query('SELECT 1'), 'the open session dropped once');
    } finally {
      await session.end().catch(() => undefined);
    }
    const url = expectData<ConnectionDetails>(await pro.api.get(`${path()}/url`), 200);
    assert.deepEqual(url, connection, 'the same address and credentials');
  });

  it('resizes down while the data fits under 90% of the new size', async () => {
    const resizing = expectData<Database>(
      await pro.api.patch(path(), { config: { cpu: 1, memory: 0.5, storage: 2 } }),
      200,
    );
    assert.equal(resizing.status, 'resizing');
    const running = await waitForStatus(pro.api, project.id, 'shop', ['running']);
    assert.deepEqual(running.config, { cpu: 1, memory: 0.5, storage: 2 });
    assert.equal(running.storage.limit_bytes, 2 * 1024 ** 3);
    assert.equal(
      await settings(['shared_buffers', 'max_parallel_workers', 'temp_file_limit']),
      '128MB,2,2GB',
    );
    assert.equal(await psql(connection.connection_string, 'SELECT count(*) FROM orders'), '1000');
  });

  it('refuses less storage than the data needs, 409, and changes nothing', async () => {
    // About 1 GB the storage limit counts, quickly: no WAL, no compression.
    await psql(
      connection.connection_string,
      `CREATE UNLOGGED TABLE filler (v text);
       ALTER TABLE filler ALTER COLUMN v SET STORAGE PLAIN;
       INSERT INTO filler SELECT repeat('x', 1900) FROM generate_series(1, 500000)`,
    );
    const starts = serverStarts(dataDir(), serverId);
    const refused = expectError(
      await pro.api.patch(path(), { config: { storage: 1 } }),
      409,
      'STORAGE_IN_USE',
    );
    assert.match(refused.message, /holds \d\.\d\d GiB: 1 GiB of storage/);
    const kept = expectData<Database>(await pro.api.get(path()), 200);
    assert.equal(kept.status, 'running');
    assert.deepEqual(kept.config, { cpu: 1, memory: 0.5, storage: 2 });
    assert.equal(serverStarts(dataDir(), serverId), starts, 'no restart');
    await psql(connection.connection_string, 'DROP TABLE filler');
  });

  it('answers the same size as it is, and refuses sizes out of bounds or above the tier', async () => {
    const starts = serverStarts(dataDir(), serverId);
    const same = expectData<Database>(
      await pro.api.patch(path(), { config: { memory: 0.5 } }),
      200,
    );
    assert.equal(same.status, 'running');
    for (const body of [
      { config: { cpu: 0 } },
      { config: { memory: 65 } },
      { config: { storage: 'lots' } },
      { config: { disk: 5 } },
      { config: [1] },
    ])
      expectError(await pro.api.patch(path(), body), 400, 'VALIDATION_ERROR');
    assert.equal(serverStarts(dataDir(), serverId), starts, 'no restart');

    const free = await signIn(await newClient(), uniqueLogin('resizer-free'));
    const freeProject = expectData<Project>(
      await free.api.post('/projects', { name: 'free-resizes' }),
      201,
    );
    const freePath = `/projects/${freeProject.id}/databases/small`;
    expectData(
      await free.api.post(`/projects/${freeProject.id}/databases`, { name: 'small' }),
      201,
    );
    const refused = expectError(
      await free.api.patch(freePath, { config: { memory: 4, storage: 20 } }),
      403,
      'QUOTA_EXCEEDED',
    );
    assert.match(refused.message, /memory <= 2, storage <= 10/);
    // Not running yet (or just so): a resize needs it running, the tier's bound comes first.
    const database = expectData<Database>(await free.api.get(freePath), 200);
    assert.deepEqual(database.config, { cpu: 1, memory: 1, storage: 10 });
    expectError(await pro.api.patch(freePath, { config: { memory: 2 } }), 404, 'PROJECT_NOT_FOUND');
    await waitForStatus(free.api, freeProject.id, 'small', ['running']);
    expectData(await free.api.delete(freePath), 200);
  });
});
