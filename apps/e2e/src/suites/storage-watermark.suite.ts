import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database, Project } from '@pgcloud/contracts';
import type { LocalS3 } from '@pgcloud/devstack';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import { Stack, provideS3 } from '@pgcloud/devstack';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { psql, runningDatabase } from '../support/databases.js';

/** A file system of 400 MB of the suite's own: a fresh stack and two servers take 120. */
const FS_SIZE = '400m';

/**
 * The watermark of the disk local servers share: DATA_DIR on a small tmpfs; once less than
 * 25% of it is free, the server furthest over its limit is fenced first and a new database
 * is refused with 503; room made again lets databases be made again.
 */
describe('the disk watermark', () => {
  const mountPoint = mkdtempSync(join(tmpdir(), 'pgcloud-watermark-'));
  const s3Dir = mkdtempSync(join(tmpdir(), 'pgcloud-watermark-s3-'));
  let localS3: LocalS3 | undefined;
  let stack: Stack;
  let owner: SignedIn;
  let project: Project;
  let metadata: pg.Client;

  before(async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_SIZE},mode=0755`, 'tmpfs', mountPoint]);
    // The run's S3 when it has one; else one of the suite's own, off the small disk.
    const s3 = await provideS3(process.env, s3Dir);
    localS3 = s3.localS3;
    stack = await Stack.start({
      env: {
        ...s3.env,
        DATA_DIR: join(mountPoint, 'data'),
        DATA_DIR_MIN_FREE_PERCENT: '25',
        RECONCILE_INTERVAL_SECONDS: '2',
        DEVICE_POLL_INTERVAL_SECONDS: '1',
        RATE_LIMIT_FREE_BURST: '1000',
        RATE_LIMIT_FREE_PER_MINUTE: '60000',
      },
    });
    owner = await signIn(new ApiClient(stack.baseUrl), 'watermark-owner');
    project = expectData<Project>(await owner.api.post('/projects', { name: 'crowded' }), 201);
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
  });

  after(async () => {
    await metadata?.end();
    await stack?.stop();
    await localS3?.destroy();
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
    rmSync(s3Dir, { recursive: true, force: true });
  });

  it('fences the largest server first and refuses new servers until there is room again', async () => {
    const path = (name: string) => `/projects/${project.id}/databases/${name}`;
    const small = (await runningDatabase(owner.api, project.id, 'small', { storage: 1 })).connection
      .connection_string;
    const big = (await runningDatabase(owner.api, project.id, 'big', { storage: 1 })).connection
      .connection_string;
    const rows = (n: number) =>
      `CREATE TABLE filler AS SELECT repeat(chr(65 + i % 26), 1900) AS t FROM generate_series(1, ${n}) i`;
    await psql(small, rows(5_000)); // about 10 MB, and its WAL
    await psql(big, rows(50_000)); // about 95 MB, and its WAL: past the watermark

    // Both are far under their 1 GiB limit; the larger is the further over it.
    await eventually(
      async () => {
        const bigOne = expectData<Database>(await owner.api.get(path('big')), 200);
        assert.equal(bigOne.storage.state, 'fenced');
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const { rows: order } = await metadata.query<{ name: string }>(
      `SELECT name FROM provisioner.databases
        WHERE storage_fenced_at IS NOT NULL ORDER BY storage_fenced_at`,
    );
    assert.equal(order[0]?.name, 'big', 'the largest first');
    await eventually(() => assert.rejects(psql(big, 'INSERT INTO filler VALUES (1)')), {
      timeoutMs: 30_000,
    });
    assert.equal(await psql(big, 'SELECT count(*) FROM filler'), '50000', 'reads go on');

    const refused = await owner.api.post(`/projects/${project.id}/databases`, { name: 'more' });
    expectError(refused, 503, 'SERVICE_UNAVAILABLE');
    expectError(await owner.api.get(path('more')), 404, 'DATABASE_NOT_FOUND');

    // Room again (the largest deleted): new servers are made again.
    expectData(await owner.api.delete(path('big')), 200);
    await eventually(
      async () =>
        expectData(
          await owner.api.post(`/projects/${project.id}/databases`, { name: 'more' }),
          201,
        ),
      { timeoutMs: 30_000, intervalMs: 500 },
    );
  });
});
