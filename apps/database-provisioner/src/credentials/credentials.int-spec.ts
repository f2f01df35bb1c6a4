import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ensureMetadataSchema } from '@pgcloud/postgres';
import { loadLauncherEnv, newRunId } from '@pgcloud/devstack';
import { runMigrations } from '@pgcloud/testing';
import pg from 'pg';
import { CreateDatabases1763780000000 } from '../migrations/1763780000000-create-databases.js';
import { StorageLimit1763790000000 } from '../migrations/1763790000000-storage-limit.js';
import { CreateRestores1763810000000 } from '../migrations/1763810000000-create-restores.js';
import { RestoreTargetText1763910000000 } from '../migrations/1763910000000-restore-target-text.js';
import { resealCredentials } from '../migrations/1764100000000-reseal-credentials.js';
import { openCredentials } from './sealed-credentials.js';
import { SecretBox } from '@pgcloud/config';

const BEFORE_RESEAL = [
  CreateDatabases1763780000000,
  StorageLimit1763790000000,
  CreateRestores1763810000000,
  RestoreTargetText1763910000000,
];

/** A value as provisioners before v2 sealed it: AES-256-GCM without associated data. */
function sealV1(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', ...[iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'))].join(
    ':',
  );
}

describe('credentials at rest', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'pgcloud-credentials-'));
  const databaseUrl = new URL(loadLauncherEnv().DATABASE_URL);
  databaseUrl.pathname = `/pgcloud_test_${newRunId().replace(/-/g, '_')}`;

  before(() => ensureMetadataSchema(databaseUrl.toString(), 'provisioner'));

  after(async () => {
    rmSync(scratch, { recursive: true, force: true });
    const admin = new URL(databaseUrl);
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${databaseUrl.pathname.slice(1)}" WITH (FORCE)`);
    await client.end();
  });

  it('gives two provisioners starting at once on a fresh DATA_DIR one key', async () => {
    const dataDir = join(scratch, 'data');
    const module = new URL('./encryption-key.js', import.meta.url).href;
    const script =
      `const { loadEncryptionKey } = await import(${JSON.stringify(module)});` +
      `const key = await loadEncryptionKey(undefined, process.argv[1]);` +
      `process.stdout.write('\\nkey=' + key.toString('hex') + '\\n');`;
    const run = () =>
      promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, dataDir]);
    // The log's warning goes to stdout too: the key is the line that says so.
    const keyOf = async (running: ReturnType<typeof run>) =>
      /^key=([0-9a-f]{64})$/m.exec((await running).stdout)?.[1];
    const [first, second] = await Promise.all([keyOf(run()), keyOf(run())]);
    assert.ok(first, 'a 32-byte key');
    assert.equal(first, second, 'both use the same key');
    assert.deepEqual(readdirSync(join(dataDir, 'keys')), ['encryption.key'], 'no draft left');
  });

  it('seals existing values again, bound to their rows: a copied value does not open', async () => {
    const key = randomBytes(32);
    const box = new SecretBox(key);
    const migrate = async (migrations: (new () => unknown)[]) => {
      await runMigrations(databaseUrl.toString(), 'provisioner', migrations);
      const reader = new pg.Client({ connectionString: databaseUrl.toString() });
      await reader.connect();
      try {
        const { rows } = await reader.query<{ id: string; password_sealed: string }>(
          'SELECT database_id AS id, password_sealed FROM provisioner.credentials ORDER BY 1',
        );
        return rows;
      } finally {
        await reader.end();
      }
    };
    await migrate(BEFORE_RESEAL);
    const client = new pg.Client({ connectionString: databaseUrl.toString() });
    await client.connect();
    try {
      for (const [id, port] of [
        ['db_a', 20001],
        ['db_b', 20002],
      ] as const) {
        await client.query(
          `INSERT INTO provisioner.databases
             (id, project_id, owner_id, name, region, platform_service_id, status, config, port)
           VALUES ($1, 'proj_x', 'user_x', $1, 'local', 'srv_' || $1, 'running', '{}', $2)`,
          [id, port],
        );
        await client.query(`INSERT INTO provisioner.credentials VALUES ($1, $2, $3)`, [
          id,
          sealV1(key, `pw-${id}`),
          sealV1(key, `repl-${id}`),
        ]);
      }
      const rows = await migrate([...BEFORE_RESEAL, resealCredentials(box)]);
      assert.ok(
        rows.every((row) => row.password_sealed.startsWith('v2:')),
        'all sealed again',
      );
      const read = async (id: string) => {
        const { rows: found } = await client.query<{
          password_sealed: string;
          replication_password_sealed: string;
        }>('SELECT * FROM provisioner.credentials WHERE database_id = $1', [id]);
        const row = found[0];
        assert.ok(row);
        return openCredentials(box, {
          databaseId: id,
          passwordSealed: row.password_sealed,
          replicationPasswordSealed: row.replication_password_sealed,
        });
      };
      assert.deepEqual(await read('db_a'), {
        password: 'pw-db_a',
        replicationPassword: 'repl-db_a',
      });
      // Someone with write access to the table moves a's password into b's row.
      await client.query(
        `UPDATE provisioner.credentials SET password_sealed =
           (SELECT password_sealed FROM provisioner.credentials WHERE database_id = 'db_a')
         WHERE database_id = 'db_b'`,
      );
      await assert.rejects(read('db_b'), /unable to authenticate|Unsupported state/);
      assert.deepEqual(await read('db_a'), {
        password: 'pw-db_a',
        replicationPassword: 'repl-db_a',
      });
    } finally {
      await client.end();
    }
  });
});
