import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureMetadataSchema } from '@pgcloud/postgres';
import { loadLauncherEnv, newRunId } from '@pgcloud/devstack';
import { runMigrations } from '@pgcloud/testing';
import pg from 'pg';
import { CreateDatabases1763780000000 } from './1763780000000-create-databases.js';
import { StorageLimit1763790000000 } from './1763790000000-storage-limit.js';
import { databaseHost } from './1764500000000-database-host.js';

describe('the database host migration', () => {
  const databaseUrl = new URL(loadLauncherEnv().DATABASE_URL);
  databaseUrl.pathname = `/pgcloud_test_${newRunId().replace(/-/g, '_')}`;
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';

  before(() => ensureMetadataSchema(databaseUrl.toString(), 'provisioner'));

  after(async () => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${databaseUrl.pathname.slice(1)}" WITH (FORCE)`);
    await client.end();
  });

  const migrate = (migrations: (new () => unknown)[]) =>
    runMigrations(databaseUrl.toString(), 'provisioner', migrations);

  it('gives the servers made before it the host they were served at; one being made has none yet', async () => {
    const before = [CreateDatabases1763780000000, StorageLimit1763790000000];
    await migrate(before);
    const client = new pg.Client({ connectionString: databaseUrl.toString() });
    await client.connect();
    try {
      for (const [id, status, port] of [
        ['db_run', 'running', 20001],
        ['db_new', 'provisioning', 20002],
      ] as const) {
        await client.query(
          `INSERT INTO provisioner.databases
             (id, project_id, owner_id, name, region, platform_service_id, status, config, port)
           VALUES ($1, 'proj_x', 'user_x', $1, 'local', 'srv_' || $1, $2, '{}', $3)`,
          [id, status, port],
        );
      }
      await migrate([...before, databaseHost('db.example.test')]);
      const { rows } = await client.query<{ id: string; host: string | null }>(
        'SELECT id, host FROM provisioner.databases ORDER BY id',
      );
      assert.deepEqual(rows, [
        { id: 'db_new', host: null },
        { id: 'db_run', host: 'db.example.test' },
      ]);
    } finally {
      await client.end();
    }
  });
});
