import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Readable } from 'node:stream';
import type {
  Backup,
  ConnectionDetails,
  CreatedBackup,
  CreatedRestore,
  Database,
  Project,
  Restore,
  RestoreDryRun,
} from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, psqlSession, runningDatabase, waitForStatus } from '../support/databases.js';
import { assertWatchedToDone, waitForRestore, watchRestore } from '../support/restores.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

// Rows A before the backup, rows B after it: a restore brings back A and not B.
const A_ROWS = 200_000;
const COUNT_SQL =
  "SELECT count(*) FILTER (WHERE batch = 'A') || '|' || count(*) FILTER (WHERE batch = 'B') FROM rows";

describe('restores: from a backup, in place and into a new database', () => {
  let owner: SignedIn;
  let project: Project;
  let databasePath: string;
  let connection: ConnectionDetails;
  let backupId: string;

  const restorePath = (backup: string) => `${databasePath}/backups/${backup}/restore`;

  before(async () => {
    owner = await signIn(await newClient(), uniqueLogin('restorer'));
    project = expectData<Project>(await owner.api.post('/projects', { name: 'restored' }), 201);
    ({ connection } = await runningDatabase(owner.api, project.id, 'vault'));
    databasePath = `/projects/${project.id}/databases/vault`;
    await psql(
      connection.connection_string,
      `CREATE TABLE rows (id serial PRIMARY KEY, batch text NOT NULL, payload text NOT NULL);
       INSERT INTO rows (batch, payload) SELECT 'A', md5(g::text) FROM generate_series(1, ${A_ROWS}) g;`,
      60_000,
    );
    const created = expectData<CreatedBackup>(await owner.api.post(`${databasePath}/backups`), 201);
    backupId = (await waitForBackup(owner.api, `${databasePath}/backups`, created.id)).id;
    await psql(
      connection.connection_string,
      "INSERT INTO rows (batch, payload) SELECT 'B', 'after the backup' FROM generate_series(1, 10)",
    );
  });

  it('restores into a new database with its own name and credentials, leaving the source', async () => {
    const created = expectData<CreatedRestore>(
      await owner.api.post(restorePath(backupId), { target_database: 'vault-copy' }),
      201,
    );
    assert.match(created.restore_id, /^rstr_[0-9a-z]{20}$/);
    assert.equal(created.status, 'pending');
    assert.equal(created.target_database, 'vault-copy');
    // Read every 300 ms while the checks below run: its phases and numbers as they move.
    const watched = watchRestore(owner.api, databasePath, created.restore_id);
    const appeared = expectData<Database>(
      await owner.api.get(`/projects/${project.id}/databases/vault-copy`),
      200,
    );
    assert.equal(appeared.status, 'restoring', 'the new database is there at once');
    expectError(
      await owner.api.post(restorePath(backupId), { target_database: 'vault-other' }),
      409,
      'OPERATION_IN_PROGRESS',
    );
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/vault-other`),
      404,
      'DATABASE_NOT_FOUND',
    );

    const seen = await watched;
    assertWatchedToDone(seen);
    assert.ok(new Set(seen.map((r) => r.phase)).size > 1, 'the restore was seen moving');
    const restore = await waitForRestore(owner.api, databasePath, created.restore_id);
    assert.equal(restore.status, 'completed', restore.error);
    assert.equal(restore.kind, 'backup');
    assert.equal(restore.backup_id, backupId);
    assert.equal(restore.target_database, 'vault-copy');
    assert.ok(restore.completed_at);
    await waitForStatus(owner.api, project.id, 'vault-copy', ['running']);
    const copy = expectData<ConnectionDetails>(
      await owner.api.get(`/projects/${project.id}/databases/vault-copy/url`),
      200,
    );
    assert.equal(copy.user, 'vault-copy');
    assert.equal(copy.database, 'vault-copy');
    assert.notEqual(copy.port, connection.port);
    assert.notEqual(
      new URL(copy.connection_string).password,
      new URL(connection.connection_string).password,
    );
    assert.equal(await psql(copy.connection_string, COUNT_SQL), `${A_ROWS}|0`);
    assert.equal(await psql(connection.connection_string, COUNT_SQL), `${A_ROWS}|10`);
    // The old name and password of the source do not open the copy.
    const wrong = new URL(copy.connection_string);
    wrong.password = new URL(connection.connection_string).password;
    await assert.rejects(psql(wrong.toString(), 'SELECT 1'));
  });

  it('restores in place: read-only meanwhile, then A without B, same connection string', async () => {
    const created = expectData<CreatedRestore>(await owner.api.post(restorePath(backupId)), 201);
    assert.equal(created.target_database, undefined);
    expectError(await owner.api.post(restorePath(backupId)), 409, 'OPERATION_IN_PROGRESS');
    // During the restore: reads work, and every way a client can ask to write is refused
    // (PostgreSQL takes SET SESSION CHARACTERISTICS itself, and refuses the write after it).
    const url = connection.connection_string;
    const insertC = "INSERT INTO rows (batch, payload) VALUES ('C', 'during')";
    await assert.rejects(psql(url, insertC), /read-only transaction/);
    await assert.rejects(
      psqlSession(url, ['BEGIN READ WRITE', insertC, 'COMMIT']),
      /cannot set transaction read-write mode/,
    );
    await assert.rejects(
      psqlSession(url, ['SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE', insertC]),
      /read-only transaction/,
    );
    await assert.rejects(
      psql(url, 'ALTER DATABASE vault SET default_transaction_read_only = off'),
      /read-only transaction/,
    );
    assert.equal(await psql(url, COUNT_SQL), `${A_ROWS}|10`);
    const during = expectData<Database>(await owner.api.get(databasePath), 200);
    assert.equal(during.status, 'restoring', 'the write was refused during the restore');

    const restore = await waitForRestore(owner.api, databasePath, created.restore_id);
    assert.equal(restore.status, 'completed', restore.error);
    const database = await waitForStatus(owner.api, project.id, 'vault', ['running']);
    assert.equal(database.status, 'running');
    const after = expectData<ConnectionDetails>(await owner.api.get(`${databasePath}/url`), 200);
    assert.equal(after.connection_string, connection.connection_string);
    assert.equal(await psql(connection.connection_string, COUNT_SQL), `${A_ROWS}|0`);
    assert.equal(await psql(url, "SELECT count(*) FROM rows WHERE batch = 'C'"), '0');
    assert.equal(await psql(url, 'SHOW default_transaction_read_only'), 'off');
    await psql(
      connection.connection_string,
      "INSERT INTO rows (batch, payload) VALUES ('B', 'again')",
    );

    const { restores } = expectData<{ restores: Restore[] }>(
      await owner.api.get(`${databasePath}/restores`),
      200,
    );
    assert.equal(restores[0]?.id, created.restore_id, 'newest first');
    assert.equal(restores[0]?.phase, 'done', 'the list shows the phase too');
    assert.equal(restores[0]?.progress.bytes_done, restores[0]?.progress.bytes_total);
    assert.equal(restores.length, 2);
  });

  it('fails a restore of a corrupted backup and leaves the database as it was, writable', async () => {
    const stack = await sharedStack();
    const bucket = stack.bucket();
    try {
      const database = expectData<Database>(await owner.api.get(databasePath), 200);
      const key = `projects/${project.id}/databases/${database.id}/base/${backupId}.tar.zst`;
      const bytes = Buffer.concat(await (await bucket.getStream(key)).toArray());
      const middle = Math.floor(bytes.length / 2);
      bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
      await bucket.uploadStream(key, Readable.from([bytes]));

      const before = await psql(connection.connection_string, COUNT_SQL);
      const created = expectData<CreatedRestore>(await owner.api.post(restorePath(backupId)), 201);
      const restore = await waitForRestore(owner.api, databasePath, created.restore_id);
      assert.equal(restore.status, 'failed');
      assert.match(restore.error ?? '', /corrupted/);
      assert.equal(restore.phase, 'downloading', 'it keeps the phase it failed in');
      await waitForStatus(owner.api, project.id, 'vault', ['running']);
      assert.equal(await psql(connection.connection_string, COUNT_SQL), before);
      await psql(
        connection.connection_string,
        "INSERT INTO rows (batch, payload) VALUES ('B', 'still writable')",
      );
    } finally {
      bucket.close();
    }
  });

  it('answers 409 BACKUP_NOT_READY, 404 for unknown ids and 400 for a bad target name', async () => {
    const created = expectData<CreatedBackup>(await owner.api.post(`${databasePath}/backups`), 201);
    expectError(await owner.api.post(restorePath(created.id)), 409, 'BACKUP_NOT_READY');
    expectError(
      await owner.api.post(restorePath('bkp_aaaaaaaaaaaaaaaaaaaa')),
      404,
      'BACKUP_NOT_FOUND',
    );
    const bad = expectError(
      await owner.api.post(restorePath(backupId), { target_database: 'Bad Name;' }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal(bad.details?.[0]?.field, 'target_database');
    expectError(
      await owner.api.post(restorePath(backupId), { target_database: 'vault' }),
      409,
      'DATABASE_NAME_TAKEN',
    );
    expectError(
      await owner.api.get(`${databasePath}/restores/rstr_aaaaaaaaaaaaaaaaaaaa`),
      404,
      'RESTORE_NOT_FOUND',
    );
    expectError(await owner.api.get(`${databasePath}/restores/nope`), 404, 'RESTORE_NOT_FOUND');
    await waitForBackup(owner.api, `${databasePath}/backups`, created.id);
  });

  it('answers a dry run with the plan after the same checks, and creates nothing', async () => {
    const restores = () => owner.api.get(`${databasePath}/restores`);
    const before = expectData<{ restores: Restore[] }>(await restores(), 200).restores;
    const backup = expectData<Backup>(
      await owner.api.get(`${databasePath}/backups/${backupId}`),
      200,
    );
    for (const body of [{}, { target_database: 'vault-dry' }]) {
      const dry = expectData<RestoreDryRun>(
        await owner.api.post(`${restorePath(backupId)}?dry_run=true`, body),
        200,
      );
      assert.deepEqual(
        { ...dry.plan, estimated_seconds: 0 },
        {
          kind: 'backup',
          base_backup_id: backupId,
          base_backup_size_bytes: backup.size_bytes,
          wal_files: 0,
          wal_bytes: 0,
          estimated_seconds: 0,
        },
      );
      assert.ok(dry.plan.estimated_seconds > 0, 'an estimate');
    }
    assert.deepEqual(expectData<{ restores: Restore[] }>(await restores(), 200).restores, before);
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/vault-dry`),
      404,
      'DATABASE_NOT_FOUND',
    );
    const database = expectData<Database>(await owner.api.get(databasePath), 200);
    assert.equal(database.status, 'running', 'an in-place dry run holds nothing');
    await psql(
      connection.connection_string,
      "INSERT INTO rows (batch, payload) VALUES ('C', 'dry')",
    );
    await psql(connection.connection_string, "DELETE FROM rows WHERE batch = 'C'");
    // The same checks as the restore itself.
    expectError(
      await owner.api.post(`${restorePath(backupId)}?dry_run=true`, { target_database: 'vault' }),
      409,
      'DATABASE_NAME_TAKEN',
    );
    expectError(
      await owner.api.post(`${restorePath('bkp_aaaaaaaaaaaaaaaaaaaa')}?dry_run=true`),
      404,
      'BACKUP_NOT_FOUND',
    );
    expectError(
      await owner.api.post(`${restorePath(backupId)}?dry_run=maybe`),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('ends a restore into a new database that is deleted meanwhile, and frees the source', async () => {
    const created = expectData<CreatedRestore>(
      await owner.api.post(restorePath(backupId), { target_database: 'vault-gone' }),
      201,
    );
    expectData(await owner.api.delete(`/projects/${project.id}/databases/vault-gone`), 200);
    const restore = await waitForRestore(owner.api, databasePath, created.restore_id);
    assert.ok(['failed', 'completed'].includes(restore.status));
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/vault-gone`),
      404,
      'DATABASE_NOT_FOUND',
    );
    // The source can be restored again: nothing holds its one restore slot.
    const next = expectData<CreatedRestore>(
      await owner.api.post(restorePath(backupId), { target_database: null }),
      201,
    );
    assert.equal(next.target_database, undefined, 'null is no target: in place');
    const done = await waitForRestore(owner.api, databasePath, next.restore_id);
    assert.ok(done.status === 'completed' || done.status === 'failed');
    await waitForStatus(owner.api, project.id, 'vault', ['running']);
  });
});
