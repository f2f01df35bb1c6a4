import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Backup, Database, LocalDatabaseDetail } from '@pgcloud/contracts';
import type { LocalDaemon } from '@pgcloud/devstack';
import type { ApiClient } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { CliUser } from '../support/cli.js';
import { psql } from '../support/databases.js';
import { sql } from '../support/local-daemon.js';
import { markersIn, upTo } from '../support/markers.js';
import { PitrDrill } from '../support/pitr-drill.js';
import { sharedDaemon } from '../support/shared-daemon.js';
import { sharedStack } from '../support/shared-stack.js';
import { TamperingProxy } from '../support/tampering-proxy.js';

// Rows, a sequence, a view and an index beside the drill's markers: what a pull must bring.
const OBJECTS_SQL = `
  CREATE SEQUENCE order_numbers START 1000;
  SELECT nextval('order_numbers') FROM generate_series(1, 41);
  CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, price numeric(8, 2));
  INSERT INTO items SELECT n, 'item ' || n, n * 1.25 FROM generate_series(1, 5000) AS n;
  CREATE INDEX items_by_name ON items (name);
  CREATE VIEW dear_items AS SELECT id, name FROM items WHERE price > 6000`;

/** One text that changes when any row, the sequence or an object of the list changes. */
const CHECKSUM_SQL = `
  SELECT md5(string_agg(i::text, ',' ORDER BY id)) || ' ' ||
    (SELECT last_value FROM order_numbers) || ' ' ||
    (SELECT count(*) FROM dear_items) || ' ' ||
    (SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'items')
    AS checksum
  FROM items i`;

// An extension that exists for the cloud's server only while the test needs it: the local
// server, on the same binaries, lacks it once its files are gone.
const EXTENSION = 'pgcloud_e2e_absent';

/**
 * `pgcloud local pull` (docs/cli.md, docs/api/local-daemon.md#pulling-a-cloud-database-down):
 * a cloud database's backup, or a point of its past, made into a local database of the
 * daemon, with the checksums checked and nothing left behind when it fails.
 */
describe('pgcloud local pull: a cloud database brought down to the daemon', () => {
  let drill: PitrDrill;
  let daemon: LocalDaemon;
  let daemonApi: ApiClient;
  let user: CliUser;
  let tmp: string;
  const cloud = () => ['--project', drill.project.id, '--db', 'drill'];
  const pullsDir = () => join(daemon.env['DAEMON_DATA_DIR'] ?? '', 'pulls');

  /** Nothing of a failed pull: no database of that name, no scratch files, no download. */
  async function assertNothingLeft(name: string): Promise<void> {
    expectError(await daemonApi.get(`/databases/${name}`), 404, 'DATABASE_NOT_FOUND');
    assert.deepEqual(readdirSync(pullsDir()), [], 'no scratch cluster');
    assert.deepEqual(readdirSync(tmp), [], 'no download');
    const { connection } = expectData<LocalDatabaseDetail>(
      await daemonApi.post('/databases', { name: `${name}-probe`, temporary: true }),
      201,
    );
    const leftovers = await sql(
      connection.connectionString,
      `SELECT datname AS name FROM pg_database WHERE datname LIKE 'pgcloud\\_pull\\_%'
       UNION ALL SELECT rolname FROM pg_roles WHERE rolname LIKE 'pgcloud\\_pull\\_%'`,
    );
    assert.deepEqual(leftovers, [], 'no half-made database or role');
    expectData(await daemonApi.delete(`/databases/${name}-probe`), 200);
  }

  async function backupNow(): Promise<Backup> {
    const backups = `${drill.path}/backups`;
    const created = expectData<Backup>(await drill.owner.api.post(backups, {}), 201);
    const backup = await waitForBackup(drill.owner.api, backups, created.id);
    assert.equal(backup.status, 'completed', backup.error ?? '');
    return backup;
  }

  after(() => rm(tmp, { recursive: true, force: true }));

  before(async () => {
    [drill, daemon] = await Promise.all([PitrDrill.start(), sharedDaemon()]);
    daemonApi = await daemon.api();
    await psql(drill.connection.connection_string, OBJECTS_SQL);
    await backupNow();
    // The CLI's temporary folder, to see that the download is gone after each pull.
    tmp = mkdtempSync(join(tmpdir(), 'pgcloud-pull-downloads-'));
    user = new CliUser((await sharedStack()).baseUrl, {
      PGCLOUD_TOKEN: drill.owner.token,
      PGCLOUD_DAEMON_URL: daemon.baseUrl,
      DAEMON_TOKEN_FILE: daemon.env['DAEMON_TOKEN_FILE'] ?? '',
      TMPDIR: tmp,
    });
  });

  it('pulls the newest backup: the same rows, sequence, view and index, owned by the login role', async () => {
    const pulled = await user.json<LocalDatabaseDetail>([
      'local',
      'pull',
      ...cloud(),
      '--as',
      'pulled',
    ]);
    assert.equal(pulled.name, 'pulled');
    assert.deepEqual(pulled, expectData(await daemonApi.get('/databases/pulled'), 200));
    const local = pulled.connection.connectionString;
    const [here] = await sql<{ checksum: string }>(local, CHECKSUM_SQL);
    assert.equal(here?.checksum, await psql(drill.connection.connection_string, CHECKSUM_SQL));
    assert.deepEqual(await markersIn(local), upTo(30));
    assert.deepEqual(
      pulled.schemas.find((schema) => schema.name === 'public'),
      { name: 'public', tableCount: 2 },
    );
    assert.equal(pulled.views, 1);
    const owners = await sql<{ owner: string }>(
      local,
      `SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'
       UNION SELECT DISTINCT viewowner FROM pg_views WHERE schemaname = 'public'`,
    );
    assert.deepEqual(owners, [{ owner: pulled.connection.user }]);
    // The login role writes to what it owns: the copy is the developer's to change.
    await sql(local, "INSERT INTO items VALUES (5001, 'local only', 1)");
    assert.deepEqual(readdirSync(tmp), [], 'the download is removed');
    assert.deepEqual(readdirSync(pullsDir()), [], 'the scratch cluster is removed');

    const again = await user.run(['local', 'pull', ...cloud(), '--as', 'pulled']);
    assert.equal(again.code, 5, again.stderr);
    assert.match(again.stderr, /--as/);
  });

  it('pulls --at a time between two markers: exactly the earlier one, with no cloud copy left', async () => {
    const tenth = drill.markers[9]?.committed.iso ?? '';
    const pulled = await user.json<LocalDatabaseDetail>([
      'local',
      'pull',
      ...cloud(),
      '--at',
      tenth,
      '--as',
      'pulled-at',
    ]);
    assert.deepEqual(await markersIn(pulled.connection.connectionString), upTo(10));
    const { databases } = expectData<{ databases: Database[] }>(
      await drill.owner.api.get(`/projects/${drill.project.id}/databases`),
      200,
    );
    assert.deepEqual(
      databases.map((database) => database.name).filter((name) => name.includes('-pull-')),
      [],
      'the temporary branch is deleted',
    );
  });

  it('leaves nothing behind from a tampered download, in the CLI or in the daemon', async () => {
    const proxy = await TamperingProxy.start(user.apiUrl);
    try {
      const run = await user.run(['local', 'pull', ...cloud(), '--as', 'tampered'], {
        PGCLOUD_API_URL: proxy.url,
      });
      assert.equal(proxy.tampered, 1, 'the download went through the proxy');
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /checksum/i);
    } finally {
      await proxy.stop();
    }
    await assertNothingLeft('tampered');

    // The daemon checks the file too: one byte changed after the CLI checked it.
    const file = join(user.home, 'drill.tar.zst');
    const { backups } = expectData<{ backups: Backup[] }>(
      await drill.owner.api.get(`${drill.path}/backups`),
      200,
    );
    const newest = backups.find((backup) => backup.status === 'completed');
    const download = await user.run([
      'backups',
      'download',
      newest?.id ?? '',
      '-o',
      file,
      ...cloud(),
    ]);
    assert.equal(download.code, 0, download.stderr);
    const bytes = await readFile(file);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 0xff;
    await writeFile(file, bytes);
    const refused = expectError(
      await daemonApi.post('/databases', {
        name: 'tampered',
        fromArchive: { path: file, checksumSha256: newest?.checksum_sha256 },
      }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal(refused.details?.[0]?.field, 'fromArchive.checksumSha256');
    await rm(file);
    await assertNothingLeft('tampered');
  });

  describe('with an extension the local server lacks', () => {
    const extensionDir = join(
      execFileSync('pg_config', ['--sharedir'], { encoding: 'utf8' }).trim(),
      'extension',
    );
    const files = [`${EXTENSION}.control`, `${EXTENSION}--1.0.sql`].map((name) =>
      join(extensionDir, name),
    );
    after(() => Promise.all(files.map((file) => rm(file, { force: true }))));

    it('fails before making anything, naming the extension', async () => {
      await writeFile(
        files[0] ?? '',
        "default_version = '1.0'\nrelocatable = true\ntrusted = true\n",
      );
      await writeFile(
        files[1] ?? '',
        "CREATE FUNCTION pgcloud_e2e_answer() RETURNS integer LANGUAGE sql AS 'SELECT 42';\n",
      );
      await psql(drill.connection.connection_string, `CREATE EXTENSION ${EXTENSION}`);
      await backupNow();
      await Promise.all(files.map((file) => rm(file)));

      const run = await user.run(['local', 'pull', ...cloud(), '--as', 'needs-extension']);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, new RegExp(`${EXTENSION}`));
      await assertNothingLeft('needs-extension');
    });
  });
});
