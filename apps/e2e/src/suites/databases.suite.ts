import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Database, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { eventually, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import {
  psql,
  query,
  runningDatabase,
  serverDirs,
  verifiedClient,
  waitForStatus,
  waitUntilClosed,
} from '../support/databases.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

async function newProject(user: SignedIn, name: string): Promise<Project> {
  return expectData<Project>(await user.api.post('/projects', { name }), 201);
}

describe('databases: real PostgreSQL servers', () => {
  let owner: SignedIn;
  let stranger: SignedIn;
  let caPem: string;

  before(async () => {
    owner = await signIn(await newClient(), uniqueLogin('dba'));
    stranger = await signIn(await newClient(), uniqueLogin('nosy'));
    const ca = await fetch(`${(await sharedStack()).baseUrl}/ca.pem`);
    assert.equal(ca.status, 200);
    caPem = await ca.text();
    assert.match(caPem, /^-----BEGIN CERTIFICATE-----/);
  });

  it('provisions a server that speaks TLS at the connection string it returns', async () => {
    const project = await newProject(owner, 'tls-shop');
    const created = await owner.api.post(`/projects/${project.id}/databases`, {
      name: 'orders',
      config: { cpu: 1, memory: 2, storage: 10 },
    });
    const database = expectData<Database>(created, 201);
    assert.equal(database.status, 'provisioning');
    assert.match(database.id, /^db_[0-9a-z]{20}$/);
    assert.match(database.platform_service_id, /^srv_[0-9a-z]{20}$/);
    assert.equal(database.region, 'local');
    assert.deepEqual(database.config, { cpu: 1, memory: 2, storage: 10 });
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/orders/url`),
      409,
      'DATABASE_NOT_READY',
    );

    const running = await waitForStatus(owner.api, project.id, 'orders', ['running', 'failed']);
    assert.equal(running.status, 'running', running.error);
    const url = expectData<{
      connection_string: string;
      host: string;
      port: number;
      user: string;
      database: string;
    }>(await owner.api.get(`/projects/${project.id}/databases/orders/url`), 200);
    assert.equal(url.user, 'orders');
    assert.equal(url.database, 'orders');
    assert.match(
      url.connection_string,
      /^postgresql:\/\/orders:[^@]+@127\.0\.0\.1:\d+\/orders\?sslmode=require$/,
    );

    // psql with the string as given, then node-postgres verifying the server with the CA.
    assert.equal(
      await psql(url.connection_string, 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'),
      't',
    );
    const [ssl] = await query<{ ssl: boolean; version: string }>(
      url.connection_string,
      caPem,
      'SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
    );
    assert.equal(ssl?.ssl, true);
    const [buffers] = await query<{ shared_buffers: string }>(
      url.connection_string,
      caPem,
      'SHOW shared_buffers',
    );
    assert.equal(buffers?.shared_buffers, '512MB', '25% of 2 GiB');

    const client = verifiedClient(url.connection_string, caPem);
    await client.connect();
    try {
      await client.query('CREATE TABLE items (id serial PRIMARY KEY, title text NOT NULL)');
      await client.query(`INSERT INTO items (title) VALUES ('first'), ('second')`);
      const { rows } = await client.query<{ title: string }>('SELECT title FROM items ORDER BY id');
      assert.deepEqual(
        rows.map((row) => row.title),
        ['first', 'second'],
      );
    } finally {
      await client.end();
    }

    const wrongPassword = new URL(url.connection_string);
    wrongPassword.password = 'not-the-password';
    await assert.rejects(
      query(wrongPassword.toString(), caPem, 'SELECT 1'),
      /password authentication failed/,
    );
    const plain = new URL(url.connection_string);
    plain.searchParams.delete('sslmode');
    const noTls = new pg.Client({ connectionString: plain.toString(), ssl: false });
    await assert.rejects(noTls.connect(), /no pg_hba.conf entry|SSL/);
    await noTls.end().catch(() => undefined);
  });

  it('refuses bad names, regions and configs, and creates nothing', async () => {
    const project = await newProject(owner, 'bad-input');
    const refused: [unknown, string][] = [
      [{ name: '' }, 'name'],
      [{ name: `a${'b'.repeat(63)}` }, 'name'],
      [{ name: 'Orders' }, 'name'],
      [{ name: '1orders' }, 'name'],
      [{ name: 'my orders' }, 'name'],
      [{ name: 'x"; DROP DATABASE postgres; --' }, 'name'],
      [{ name: "o'reilly" }, 'name'],
      [{ name: 'postgres' }, 'name'],
      [{ name: 'template1' }, 'name'],
      [{ name: 'pgcloud_replication' }, 'name'],
      [{ name: 'pg_stats' }, 'name'],
      [{ name: 'fine', region: 'mars-1' }, 'region'],
      [{ name: 'fine', config: { cpu: 0 } }, 'config.cpu'],
      [{ name: 'fine', config: { cpu: 17 } }, 'config.cpu'],
      [{ name: 'fine', config: { memory: 100 } }, 'config.memory'],
      [{ name: 'fine', config: { storage: 0 } }, 'config.storage'],
      [{ name: 'fine', config: { storage: 2000 } }, 'config.storage'],
      [{ name: 'fine', config: { cpu: 'two' } }, 'config.cpu'],
    ];
    for (const [body, field] of refused) {
      const error = expectError(
        await owner.api.post(`/projects/${project.id}/databases`, body),
        400,
        'VALIDATION_ERROR',
      );
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(error.details)}`,
      );
    }
    for (const config of [{ cpu: 2 }, { memory: 4 }, { storage: 20 }]) {
      expectError(
        await owner.api.post(`/projects/${project.id}/databases`, { name: 'big', config }),
        403,
        'QUOTA_EXCEEDED',
      );
    }
    const { databases } = expectData<{ databases: Database[] }>(
      await owner.api.get(`/projects/${project.id}/databases`),
      200,
    );
    assert.deepEqual(databases, []);
  });

  it('allows three Free databases per project, and refuses a duplicate name', async () => {
    const project = await newProject(owner, 'quota');
    for (const name of ['one', 'two', 'three']) {
      expectData(await owner.api.post(`/projects/${project.id}/databases`, { name }), 201);
    }
    expectError(
      await owner.api.post(`/projects/${project.id}/databases`, { name: 'one' }),
      403,
      'QUOTA_EXCEEDED',
    );
    const other = await newProject(owner, 'quota-other');
    expectData(await owner.api.post(`/projects/${other.id}/databases`, { name: 'one' }), 201);
    expectError(
      await owner.api.post(`/projects/${other.id}/databases`, { name: 'one' }),
      409,
      'DATABASE_NAME_TAKEN',
    );
    // project-service counts from the provisioner's events: within milliseconds.
    await eventually(async () => {
      const detail = expectData<{ database_count: number }>(
        await owner.api.get(`/projects/${project.id}`),
        200,
      );
      assert.equal(detail.database_count, 3);
    });
    expectData(await owner.api.delete(`/projects/${project.id}?force=true`), 200);
    expectData(await owner.api.delete(`/projects/${other.id}?force=true`), 200);
  });

  it("hides another account's databases on every route", async () => {
    const project = await newProject(owner, 'hidden');
    expectData(await owner.api.post(`/projects/${project.id}/databases`, { name: 'secret' }), 201);
    const base = `/projects/${project.id}/databases`;
    expectError(await stranger.api.get(base), 404, 'PROJECT_NOT_FOUND');
    expectError(await stranger.api.post(base, { name: 'mine-now' }), 404, 'PROJECT_NOT_FOUND');
    expectError(await stranger.api.get(`${base}/secret`), 404, 'PROJECT_NOT_FOUND');
    expectError(await stranger.api.get(`${base}/secret/url`), 404, 'PROJECT_NOT_FOUND');
    expectError(await stranger.api.delete(`${base}/secret`), 404, 'PROJECT_NOT_FOUND');
    expectError(await owner.api.get(`${base}/nope`), 404, 'DATABASE_NOT_FOUND');
    expectError(
      await owner.api.get(`/projects/proj_k3v9x0q2m8t4b7w1c5zd/databases`),
      404,
      'PROJECT_NOT_FOUND',
    );
    await waitForStatus(owner.api, project.id, 'secret', ['running']);
    expectData(await owner.api.delete(`/projects/${project.id}?force=true`), 200);
  });

  it('deletes a database: gone at once, then its server, data and credentials', async () => {
    const stack = await sharedStack();
    const project = await newProject(owner, 'short-lived');
    const { database, connection } = await runningDatabase(owner.api, project.id, 'temp');
    assert.ok(serverDirs(stack.env['DATA_DIR'] ?? '').includes(database.platform_service_id));
    assert.deepEqual(
      expectData(await owner.api.delete(`/projects/${project.id}/databases/temp`), 200),
      { id: database.id, deleted: true },
    );
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/temp`),
      404,
      'DATABASE_NOT_FOUND',
    );
    await eventually(async () => {
      const detail = expectData<{ database_count: number }>(
        await owner.api.get(`/projects/${project.id}`),
        200,
      );
      assert.equal(detail.database_count, 0);
    });

    // The server, its data directory and its credentials go in the background, together.
    await waitUntilClosed(connection.port);
    const dataDir = stack.env['DATA_DIR'] ?? '';
    await eventually(() =>
      assert.ok(
        !serverDirs(dataDir).includes(database.platform_service_id),
        'its data directory is gone',
      ),
    );
    const metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
    try {
      await eventually(async () => {
        const { rows } = await metadata.query(
          'SELECT 1 FROM provisioner.credentials WHERE database_id = $1',
          [database.id],
        );
        assert.equal(rows.length, 0, 'its credentials are gone');
      });
    } finally {
      await metadata.end();
    }
  });

  it('refuses to delete a project with databases unless forced, then removes them all', async () => {
    const project = await newProject(owner, 'cascade');
    const first = await runningDatabase(owner.api, project.id, 'alpha');
    const second = await runningDatabase(owner.api, project.id, 'beta');
    expectError(await owner.api.delete(`/projects/${project.id}`), 409, 'PROJECT_NOT_EMPTY');
    expectData(await owner.api.delete(`/projects/${project.id}?force=true`), 200);
    expectError(await owner.api.get(`/projects/${project.id}`), 404, 'PROJECT_NOT_FOUND');
    await waitUntilClosed(first.connection.port);
    await waitUntilClosed(second.connection.port);
  });
});
