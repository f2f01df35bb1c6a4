import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  LocalDatabaseDetail,
  LocalDatabaseList,
  LocalSnapshot,
  LocalSnapshotList,
} from '@pgcloud/contracts';
import { LocalDaemon } from '@pgcloud/devstack';
import type { ApiClient } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { openSession, serverDatabases, sql } from '../support/local-daemon.js';

/**
 * Snapshots of local databases and resets to them (docs/api/local-daemon.md#snapshots): the
 * data back as it was at the snapshot, its sessions ended; snapshots invisible as
 * databases and gone with their database.
 */
describe('local daemon: snapshots and reset', () => {
  let daemon: LocalDaemon;
  let api: ApiClient;
  let shop: LocalDatabaseDetail;

  const rows = async () =>
    (
      await sql<{ item: string }>(
        shop.connection.connectionString,
        'SELECT item FROM orders ORDER BY id',
      )
    ).map((row) => row.item);
  const onServer = async () =>
    (await serverDatabases(shop.connection)).map((entry) => entry.split(':')[0] ?? '');

  before(async () => {
    daemon = await LocalDaemon.start('snapshots');
    api = await daemon.api();
    shop = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'shop', ttlSeconds: 86_400 }),
      201,
    );
    await sql(
      shop.connection.connectionString,
      "CREATE TABLE orders (id int PRIMARY KEY, item text); INSERT INTO orders VALUES (1, 'seed')",
    );
  });

  after(async () => {
    await daemon?.stop();
  });

  it('resets a database to its snapshot: the data as it was, its sessions ended', async () => {
    const before_ = await onServer();
    const snapshot = expectData<LocalSnapshot>(
      await api.post('/databases/shop/snapshots', { name: 'seeded' }),
      201,
    );
    assert.equal(snapshot.name, 'seeded');
    assert.equal(snapshot.database, 'shop');
    assert.ok(snapshot.size > 0);
    const hidden = (await onServer()).filter((name) => !before_.includes(name));
    assert.equal(hidden.length, 1, 'one copy on the server');
    const listed = expectData<LocalDatabaseList>(await api.get('/databases'), 200);
    assert.deepEqual(
      listed.databases.map((database) => database.name),
      ['shop'],
      'a snapshot is no database of the list',
    );
    expectError(await api.get(`/databases/${hidden[0]}`), 404, 'DATABASE_NOT_FOUND');

    await sql(
      shop.connection.connectionString,
      "INSERT INTO orders VALUES (2, 'later'); UPDATE orders SET item = 'changed' WHERE id = 1",
    );
    assert.deepEqual(await rows(), ['changed', 'later']);
    const session = await openSession(shop.connection.connectionString);
    session.on('error', () => undefined);
    const reset = expectData<LocalDatabaseDetail>(
      await api.post('/databases/shop/reset', { snapshot: 'seeded' }),
      200,
    );
    await assert.rejects(session.query('SELECT 1'), 'its session was ended');
    await session.end().catch(() => undefined);
    assert.equal(reset.name, 'shop');
    assert.equal(reset.tables, 1);
    assert.deepEqual(await rows(), ['seed']);
    // The same database for the daemon: its expiry and creation time, and its snapshots.
    assert.equal(reset.expiresAt, shop.expiresAt);
    assert.equal(reset.createdAt, shop.createdAt);
    const snapshots = expectData<LocalSnapshotList>(
      await api.get('/databases/shop/snapshots'),
      200,
    );
    assert.deepEqual(
      snapshots.snapshots.map((s) => s.name),
      ['seeded'],
    );
    // Reset twice: the snapshot itself did not change.
    await sql(shop.connection.connectionString, 'DELETE FROM orders');
    expectData(await api.post('/databases/shop/reset', { snapshot: 'seeded' }), 200);
    assert.deepEqual(await rows(), ['seed']);
  });

  it('refuses a name taken, an unknown snapshot and an unknown database', async () => {
    expectError(
      await api.post('/databases/shop/snapshots', { name: 'seeded' }),
      409,
      'SNAPSHOT_NAME_TAKEN',
    );
    expectError(
      await api.post('/databases/shop/reset', { snapshot: 'nope' }),
      404,
      'SNAPSHOT_NOT_FOUND',
    );
    expectError(await api.delete('/databases/shop/snapshots/nope'), 404, 'SNAPSHOT_NOT_FOUND');
    expectError(
      await api.post('/databases/absent/snapshots', { name: 'x' }),
      404,
      'DATABASE_NOT_FOUND',
    );
    expectError(
      await api.post('/databases/shop/snapshots', { name: 'Bad Name' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await api.post('/databases/shop/reset', {}), 400, 'VALIDATION_ERROR');
    // Taken while a session holds the database: refused, and nothing left behind.
    const session = await openSession(shop.connection.connectionString);
    try {
      const serverBefore = await onServer();
      expectError(
        await api.post('/databases/shop/snapshots', { name: 'busy' }),
        409,
        'TEMPLATE_IN_USE',
      );
      assert.deepEqual(await onServer(), serverBefore);
    } finally {
      await session.end();
    }
    const snapshots = expectData<LocalSnapshotList>(
      await api.get('/databases/shop/snapshots'),
      200,
    );
    assert.deepEqual(
      snapshots.snapshots.map((s) => s.name),
      ['seeded'],
    );
  });

  it('deletes a snapshot, and every snapshot with its database', async () => {
    const serverBefore = await onServer();
    expectData(await api.post('/databases/shop/snapshots', { name: 'extra' }), 201);
    expectData(await api.delete('/databases/shop/snapshots/extra'), 200);
    assert.deepEqual(await onServer(), serverBefore, 'its copy is gone');
    expectData(await api.post('/databases/shop/snapshots', { name: 'second' }), 201);
    expectData(await api.delete('/databases/shop'), 200);
    const left = (await onServer()).filter((name) => name.startsWith('pgcloud_snapshot_'));
    assert.deepEqual(left, [], 'no snapshot outlives its database');
    // The name is free again, with no snapshots of the old database.
    expectData(await api.post('/databases', { name: 'shop' }), 201);
    const snapshots = expectData<LocalSnapshotList>(
      await api.get('/databases/shop/snapshots'),
      200,
    );
    assert.deepEqual(snapshots.snapshots, []);
  });
});
