import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Backup, CreatedBackup, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import type { ObjectStore } from '@pgcloud/storage';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { ownStack } from '../support/shared-stack.js';

const MiB = 1024 * 1024;
// About 300 MB of rows that compress only about in half, so the backup takes a while.
const BULK_ROWS = 1_900_000;
const FILE_SIZE_LIMIT_KIB = 8 * 1024;

/** A stack of its own: these tests kill and restart its backup-service. */
describe('backups under faults: no staging on disk, kill -9 mid-upload', () => {
  let stack: Stack;
  let user: SignedIn;
  let project: Project;
  let databaseId: string;
  let backupsPath: string;
  let bucket: ObjectStore;

  before(async () => {
    stack = await ownStack({
      JOB_LEASE_SECONDS: '3',
    });
    bucket = stack.bucket();
    user = await signIn(new ApiClient(stack.baseUrl), 'fault-tester');
    project = expectData<Project>(await user.api.post('/projects', { name: 'faults' }), 201);
    const { database, connection } = await runningDatabase(user.api, project.id, 'bulk');
    databaseId = database.id;
    backupsPath = `/projects/${project.id}/databases/bulk/backups`;
    await psql(
      connection.connection_string,
      `CREATE TABLE bulk AS SELECT g AS id,
         md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) AS payload
       FROM generate_series(1, ${BULK_ROWS}) g;
       SELECT pg_size_pretty(pg_total_relation_size('bulk'));`,
      120_000,
    );
  });

  after(async () => {
    bucket?.close();
    await stack?.stop();
  });

  it('streams a backup far bigger than the file-size limit the service runs under', async () => {
    await stack.stopApp('backup-service');
    const limited = 'backup-service-limited';
    await stack.startApp('backup-service', {
      name: limited,
      fileSizeLimitKiB: FILE_SIZE_LIMIT_KIB,
    });
    try {
      const created = expectData<CreatedBackup>(await user.api.post(backupsPath), 201);
      const backup = await waitForBackup(user.api, backupsPath, created.id);
      assert.equal(backup.status, 'completed', backup.error);
      assert.ok(
        backup.size_bytes > 4 * FILE_SIZE_LIMIT_KIB * 1024,
        `${backup.size_bytes} bytes, against a ${FILE_SIZE_LIMIT_KIB} KiB file limit`,
      );
      const pid = stack.pidOf(limited);
      assert.ok(pid !== undefined);
      process.kill(pid, 0); // still alive: nothing it wrote crossed the limit
    } finally {
      await stack.stopApp(limited);
      await stack.startApp('backup-service');
    }
  });

  it('ends a backup whose service was killed mid-upload completed or failed, leaving no parts', async () => {
    const created = expectData<CreatedBackup>(await user.api.post(backupsPath), 201);
    const key = `projects/${project.id}/databases/${databaseId}/base/${created.id}.tar.zst`;
    const deadline = Date.now() + 60_000;
    while ((await bucket.listIncompleteUploads(key)).length === 0) {
      assert.ok(Date.now() < deadline, 'the upload started');
      await sleep(25);
    }
    // Killed while its multipart upload is open: mid-backup.
    await stack.stopApp('backup-service', 'SIGKILL');

    await stack.startApp('backup-service');
    const backup = await waitForBackup(user.api, backupsPath, created.id, undefined, 180_000);
    if (backup.status === 'failed') assert.ok(backup.error, 'a failed backup says why');
    else {
      const [object] = await bucket.list(key);
      assert.equal(object?.size, backup.size_bytes, 'the object is the one recorded');
      assert.ok(backup.size_bytes > 50 * MiB);
    }
    // This backup ended with its parts gone: at once.
    assert.deepEqual(await bucket.listIncompleteUploads(key), []);
    // The schedule takes an automated backup of this database too, on a tick of its own;
    // killed or not, it ends by itself, so nothing stays open or unfinished for good.
    await eventually(
      async () => {
        assert.deepEqual(await bucket.listIncompleteUploads(`projects/${project.id}/`), []);
        const { backups } = expectData<{ backups: Backup[] }>(await user.api.get(backupsPath), 200);
        assert.deepEqual(
          backups.filter((b) => b.status === 'pending' || b.status === 'running'),
          [],
          'nothing is left pending or running',
        );
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
  });
});
