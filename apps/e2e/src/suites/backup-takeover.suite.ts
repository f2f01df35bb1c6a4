import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type {
  Backup,
  ConnectionDetails,
  CreatedBackup,
  CreatedRestore,
  Project,
} from '@pgcloud/contracts';
import type { ObjectStore } from '@pgcloud/storage';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, eventually, signIn, TcpProxy } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { waitForRestore } from '../support/restores.js';
import { ownStack } from '../support/shared-stack.js';

// About 300 MB of rows that compress only about in half, so the backup takes a while.
const BULK_ROWS = 1_900_000;
const LEASE_SECONDS = 3;
const CUT = 'backup-service-cut';

/** The SHA-256 (hex) of an object's bytes, as downloaded. */
async function sha256Of(bucket: ObjectStore, key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await bucket.getStream(key)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** How many times `text` occurs in `log`. */
function occurrences(log: string, text: string): number {
  return log.split(text).length - 1;
}

/**
 * A stack of its own: its first backup-service reaches the metadata database through a
 * proxy that the test cuts mid-backup, and a second one, connected directly, takes over.
 */
describe('backups when a worker is cut off from the metadata database mid-upload', () => {
  let stack: Stack;
  let proxy: TcpProxy;
  let bucket: ObjectStore;
  let user: SignedIn;
  let project: Project;
  let databaseId: string;
  let databasePath: string;

  before(async () => {
    stack = await ownStack({ JOB_LEASE_SECONDS: String(LEASE_SECONDS) });
    bucket = stack.bucket();
    user = await signIn(new ApiClient(stack.baseUrl), 'takeover-tester');
    project = expectData<Project>(await user.api.post('/projects', { name: 'takeover' }), 201);
    const { database, connection } = await runningDatabase(user.api, project.id, 'bulk');
    databaseId = database.id;
    databasePath = `/projects/${project.id}/databases/bulk`;
    await psql(
      connection.connection_string,
      `CREATE TABLE marker (note text);
       INSERT INTO marker VALUES ('before the backup');
       CREATE TABLE bulk AS SELECT g AS id,
         md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) AS payload
       FROM generate_series(1, ${BULK_ROWS}) g;`,
      120_000,
    );
    // The only backup-service at first: the one whose metadata database can be cut off.
    const metadata = new URL(stack.env['DATABASE_URL'] ?? '');
    proxy = await TcpProxy.start({
      host: metadata.hostname,
      port: Number(metadata.port || 5432),
    });
    await stack.stopApp('backup-service');
    await stack.startApp('backup-service', {
      name: CUT,
      env: { DATABASE_URL: proxy.rewrite(metadata.toString()) },
    });
  });

  after(async () => {
    await proxy?.close();
    bucket?.close();
    await stack?.stop();
  });

  it('stops the cut-off worker within its lease; the backup ends once, its object matching', async () => {
    const backupsPath = `${databasePath}/backups`;
    const created = expectData<CreatedBackup>(await user.api.post(backupsPath), 201);
    const key = `projects/${project.id}/databases/${databaseId}/base/${created.id}.tar.zst`;
    await eventually(
      async () => assert.equal((await bucket.listIncompleteUploads(key)).length, 1, 'uploading'),
      { timeoutMs: 120_000, intervalMs: 25 },
    );

    proxy.cut();
    // The worker notices on its own, before its lease lapses, and stops its step: its
    // pg_basebackup and its upload, whose parts go; it wrote no object.
    const stopped = `job backup.take ${created.id} attempt 1/3: lease not renewed`;
    await eventually(() => assert.ok(stack.logOf(CUT).includes(stopped), 'the worker stopped'));
    assert.match(stack.logOf(CUT), /stopping the handler before the lease lapses/);
    await eventually(async () => {
      assert.deepEqual(await bucket.listIncompleteUploads(key), [], 'its upload was aborted');
      assert.deepEqual(await bucket.list(key), [], 'it wrote no object');
    });
    const cutPid = stack.pidOf(CUT);
    assert.ok(cutPid !== undefined);
    process.kill(cutPid, 0); // still running, only cut off: the fence is its own doing

    // A worker that reaches the database takes the job over once the lease has lapsed.
    await stack.startApp('backup-service');
    const backup = await eventually(
      async () => {
        // The cut-off worker still takes its share of the requests, and fails them.
        const answer = await user.api.get(`${backupsPath}/${created.id}`);
        assert.equal(answer.status, 200);
        const read = expectData<Backup>(answer, 200);
        assert.ok(read.status === 'completed' || read.status === 'failed', read.status);
        return read;
      },
      { timeoutMs: 300_000, intervalMs: 500 },
    );
    assert.equal(backup.status, 'completed', backup.error);
    assert.ok(backup.checksum_sha256);

    const objects = (await bucket.list(`projects/${project.id}/`)).filter((o) =>
      o.key.includes(created.id),
    );
    assert.deepEqual(
      objects.map((o) => [o.key, o.size]),
      [[key, backup.size_bytes]],
      'one object for the backup, of the recorded size',
    );
    assert.equal(await sha256Of(bucket, key), backup.checksum_sha256, 'the recorded checksum');
    assert.deepEqual(await bucket.listIncompleteUploads(key), []);
    // Completed once, by the worker that took over.
    await stack.stopApp(CUT);
    const done = `backup ${created.id} completed`;
    assert.equal(occurrences(stack.logOf(CUT), done), 0, 'not by the cut-off worker');
    assert.equal(occurrences(stack.logOf('backup-service'), done), 1, 'by the other, once');
  });

  it('restores that backup into a new database with the data it held', async () => {
    const { backups } = expectData<{ backups: Backup[] }>(
      await user.api.get(`${databasePath}/backups`),
      200,
    );
    const backup = backups.find((b) => b.type === 'manual' && b.status === 'completed');
    assert.ok(backup, 'the backup taken over');
    const created = expectData<CreatedRestore>(
      await user.api.post(`${databasePath}/backups/${backup.id}/restore`, {
        target_database: 'bulk-copy',
      }),
      201,
    );
    const restore = await waitForRestore(
      user.api,
      databasePath,
      created.restore_id,
      undefined,
      300_000,
    );
    assert.equal(restore.status, 'completed', restore.error);
    await waitForStatus(user.api, project.id, 'bulk-copy', ['running']);
    const copy = expectData<ConnectionDetails>(
      await user.api.get(`/projects/${project.id}/databases/bulk-copy/url`),
      200,
    );
    assert.equal(
      await psql(
        copy.connection_string,
        'SELECT (SELECT count(*) FROM bulk) || $$|$$ || (SELECT note FROM marker)',
        60_000,
      ),
      `${BULK_ROWS}|before the backup`,
    );
  });
});
