import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LocalDatabaseDetail, LocalDatabaseList, LocalDeleted } from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { openSession, sql } from '../support/local-daemon.js';
import { daemonApi } from '../support/shared-daemon.js';
import { TEMPLATE_COUNTS, TEMPLATE_SQL } from '../support/template-schema.js';

function counts(detail: LocalDatabaseDetail): Partial<LocalDatabaseDetail> {
  const { tables, views, functions, indexes, schemas, extensions } = detail;
  return { tables, views, functions, indexes, schemas, extensions };
}

describe('local daemon: databases from templates', () => {
  let api: ApiClient;
  let template: LocalDatabaseDetail;

  before(async () => {
    api = await daemonApi();
    template = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'shop-template' }),
      201,
    );
    const session = await openSession(template.connection.connectionString);
    try {
      await session.query(TEMPLATE_SQL);
    } finally {
      await session.end();
    }
  });

  it('creates a blank database owned by its login role, and shows how to reach it', async () => {
    const blank = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'blank' }),
      201,
    );
    assert.deepEqual(counts(blank), {
      tables: 0,
      views: 0,
      functions: 0,
      indexes: 0,
      schemas: [{ name: 'public', tableCount: 0 }],
      extensions: [{ name: 'plpgsql', version: '1.0' }],
    });
    const { connection } = blank;
    assert.equal(connection.host, '127.0.0.1');
    assert.equal(connection.database, 'blank');
    assert.equal(connection.user, 'pgcloud');
    assert.ok(connection.password.length >= 32);
    assert.equal(
      connection.connectionString,
      `postgresql://pgcloud:${encodeURIComponent(connection.password)}@127.0.0.1:${connection.port}/blank`,
    );
    const [row] = await sql<{ user: string; owner: string; superuser: boolean }>(
      connection.connectionString,
      `SELECT current_user AS user, pg_get_userbyid(datdba) AS owner, usesuper AS superuser
       FROM pg_database, pg_user WHERE datname = current_database() AND usename = current_user`,
    );
    assert.deepEqual(row, { user: 'pgcloud', owner: 'pgcloud', superuser: false });
    expectData(await api.delete('/databases/blank'), 200);
  });

  it('counts the template exactly as docs/api/local-daemon.md says', async () => {
    const shown = expectData<LocalDatabaseDetail>(await api.get('/databases/shop-template'), 200);
    assert.deepEqual(counts(shown), TEMPLATE_COUNTS);
    assert.equal(shown.createdAt, template.createdAt);
    // The temporary schemas are there, and still not counted.
    const temporary = await sql<{ count: number }>(
      template.connection.connectionString,
      "SELECT count(*)::int AS count FROM pg_namespace WHERE nspname ~ '^pg_(toast_)?temp_'",
    );
    assert.ok((temporary[0]?.count ?? 0) >= 2);
  });

  it('copies the template quickly, with every count, and its rows', async () => {
    const started = performance.now();
    const copy = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'shop-dev', template: 'shop-template' }),
      201,
    );
    const elapsed = performance.now() - started;
    // A file copy, about 0.1 s even for 100 MB (bench/'s daemon-template measures it): the
    // bound here is generous, so that a busy machine never breaks it.
    assert.ok(elapsed < 10_000, `create from template took ${Math.round(elapsed)} ms`);
    assert.equal(copy.name, 'shop-dev');
    assert.deepEqual(counts(copy), TEMPLATE_COUNTS);
    assert.ok(copy.size > 1_000_000, `size ${copy.size}`);
    assert.ok(Math.abs(Date.parse(copy.createdAt) - Date.now()) < 60_000, copy.createdAt);
    assert.equal(copy.connection.database, 'shop-dev');
    const rows = await sql<{ customers: number; digest: string; items: string[] }>(
      copy.connection.connectionString,
      `SELECT (SELECT count(*)::int FROM customers) AS customers,
              email_digest('a@example.test') AS digest,
              (SELECT array_agg(name ORDER BY name) FROM inventory.item_names) AS items`,
    );
    assert.deepEqual(rows[0]?.customers, 100);
    assert.match(rows[0]?.digest ?? '', /^[0-9a-f]{64}$/);
    assert.deepEqual(rows[0]?.items, ['desk', 'lamp']);
    assert.deepEqual(
      counts(expectData(await api.get('/databases/shop-dev'), 200)),
      TEMPLATE_COUNTS,
    );
  });

  it('lists every database with its size, tableCount, createdAt and lifetime', async () => {
    const { databases } = expectData<LocalDatabaseList>(await api.get('/databases'), 200);
    const byName = new Map(databases.map((database) => [database.name, database]));
    for (const name of ['shop-template', 'shop-dev']) {
      const listed = byName.get(name);
      assert.ok(listed, `${name} is listed`);
      assert.equal(listed.tableCount, 5);
      assert.ok(listed.size > 1_000_000);
      assert.ok(!Number.isNaN(Date.parse(listed.createdAt)));
    }
    assert.deepEqual(Object.keys(byName.get('shop-dev') ?? {}), [
      'name',
      'size',
      'tableCount',
      'createdAt',
      'expiresAt',
      'temporary',
    ]);
    assert.equal(byName.get('shop-template')?.createdAt, template.createdAt);
    for (const hidden of ['postgres', 'template0', 'template1', 'pgcloud_daemon'])
      assert.ok(!byName.has(hidden), `${hidden} is not listed`);
  });

  it('deletes a database, closing its open connections first', async () => {
    const copy = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'shop-doomed', template: 'shop-template' }),
      201,
    );
    const session = await openSession(copy.connection.connectionString);
    session.on('error', () => undefined); // the daemon ends this session
    try {
      const deleted = expectData<LocalDeleted>(await api.delete('/databases/shop-doomed'), 200);
      assert.deepEqual(deleted, { name: 'shop-doomed', deleted: true });
      await assert.rejects(session.query('SELECT 1'));
    } finally {
      await session.end().catch(() => undefined);
    }
    expectError(await api.get('/databases/shop-doomed'), 404, 'DATABASE_NOT_FOUND');
    expectError(await api.delete('/databases/shop-doomed'), 404, 'DATABASE_NOT_FOUND');
    const { databases } = expectData<LocalDatabaseList>(await api.get('/databases'), 200);
    assert.ok(!databases.some((database) => database.name === 'shop-doomed'));
    // The name is free again, and a database made under it is a new one.
    const again = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'shop-doomed' }),
      201,
    );
    assert.ok(Date.parse(again.createdAt) > Date.parse(copy.createdAt));
    expectData(await api.delete('/databases/shop-doomed'), 200);
  });
});
