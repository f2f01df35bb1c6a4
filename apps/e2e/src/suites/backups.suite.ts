import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Backup, CreatedBackup, DownloadLink, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { RestoredByHand, downloadArchive as download, eventually, signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { SHARED_STACK_ENV, newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

const ROWS = 5000;
// The real expiry of a pre-signed link may come this much before the expires_at answered
// (the signature's date is whole seconds).
const EXPIRY_SLACK_MS = 1500;

/**
 * Runs `use` on a newly issued download link and answers what it answered, with the link.
 * The shared stack's links live 5 s, so on a busy machine one may expire before `use` is
 * through with it: only then is `use` run again on a new link (a few times at most). A
 * failure while the link was still valid is thrown at once.
 */
async function withFreshLink<T>(
  issue: () => Promise<DownloadLink>,
  use: (link: DownloadLink) => Promise<T>,
): Promise<{ link: DownloadLink; result: T }> {
  for (let attempt = 1; ; attempt++) {
    const link = await issue();
    try {
      return { link, result: await use(link) };
    } catch (err) {
      const expiredMeanwhile = Date.now() >= Date.parse(link.expires_at) - EXPIRY_SLACK_MS;
      if (!expiredMeanwhile || attempt >= 5) throw err;
    }
  }
}

describe('backups: real base backups in S3', () => {
  let owner: SignedIn;
  let stranger: SignedIn;
  let project: Project;
  let backupsPath: string;
  let connectionString: string;
  let databaseId: string;
  const dir = mkdtempSync(join(tmpdir(), 'pgcloud-e2e-backups-'));
  chmodSync(dir, 0o755); // PostgreSQL's OS user extracts the download from here

  before(async () => {
    owner = await signIn(await newClient(), uniqueLogin('backer'));
    stranger = await signIn(await newClient(), uniqueLogin('prowler'));
    project = expectData<Project>(await owner.api.post('/projects', { name: 'backed-up' }), 201);
    const { database, connection } = await runningDatabase(owner.api, project.id, 'ledger');
    databaseId = database.id;
    connectionString = connection.connection_string;
    backupsPath = `/projects/${project.id}/databases/ledger/backups`;
    await psql(
      connectionString,
      `CREATE TABLE entries (id int PRIMARY KEY, memo text NOT NULL);
       INSERT INTO entries SELECT g, 'entry ' || g FROM generate_series(1, ${ROWS}) g;`,
    );
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('takes a backup that downloads, checks out, verifies and starts with the rows', async () => {
    const created = expectData<CreatedBackup>(await owner.api.post(backupsPath), 201);
    assert.match(created.id, /^bkp_[0-9a-z]{20}$/);
    assert.equal(created.type, 'manual');
    assert.equal(created.status, 'pending');
    assert.ok(Date.parse(created.created_at) > Date.now() - 60_000);

    const backup = await waitForBackup(owner.api, backupsPath, created.id);
    assert.equal(backup.status, 'completed', backup.error);
    assert.equal(backup.database_id, databaseId);
    assert.ok(backup.size_bytes > 0);
    assert.match(backup.checksum_sha256 ?? '', /^[0-9a-f]{64}$/);
    assert.match(backup.start_lsn ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);
    assert.match(backup.end_lsn ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);
    assert.ok(backup.completed_at, 'a completed backup says when');
    assert.equal(backup.expires_at, undefined, 'a manual backup does not expire');

    const ttlMs = Number(SHARED_STACK_ENV.DOWNLOAD_URL_TTL_SECONDS) * 1000;
    const { result: fetched } = await withFreshLink(
      async () => {
        const link = expectData<DownloadLink>(
          await owner.api.get(`${backupsPath}/${backup.id}/download`),
          200,
        );
        assert.ok(Math.abs(Date.parse(link.expires_at) - (Date.now() + ttlMs)) < 10_000);
        return link;
      },
      async (link) => {
        const answer = await download(link.download_url, dir);
        assert.equal(answer.status, 200);
        return answer;
      },
    );
    assert.equal(fetched.sha256, backup.checksum_sha256, 'the object is the checksummed one');
    assert.equal(fetched.headers.get('content-length'), String(backup.size_bytes));
    assert.match(
      fetched.headers.get('content-disposition') ?? '',
      new RegExp(`attachment; filename="ledger-${backup.id}\\.tar\\.zst"`),
    );

    const restored = await RestoredByHand.extract(fetched.file ?? '');
    try {
      assert.match(await restored.verify(), /backup successfully verified/);
      await restored.start();
      assert.equal(
        await restored.query('ledger', 'SELECT count(*), max(memo) FROM entries WHERE id > 0'),
        `${ROWS}|entry 999`,
      );
    } finally {
      await restored.remove();
    }
  });

  it('lists backups newest first and hides unfinished ones from download', async () => {
    const created = expectData<CreatedBackup>(await owner.api.post(backupsPath), 201);
    // Asked at once: the backup is still pending or running.
    const early = await owner.api.get(`${backupsPath}/${created.id}/download`);
    expectError(early, 409, 'BACKUP_NOT_READY');
    await waitForBackup(owner.api, backupsPath, created.id);
    const { backups } = expectData<{ backups: Backup[] }>(await owner.api.get(backupsPath), 200);
    assert.ok(backups.length >= 2);
    // The schedule may add an automated backup of this database at any moment: the newest
    // manual one (this suite alone takes those) is this one.
    assert.equal(backups.filter((b) => b.type === 'manual')[0]?.id, created.id, 'newest first');
    const times = backups.map((b) => Date.parse(b.created_at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    );
  });

  it('refuses tampered and expired download links at the S3 server', async () => {
    const { backups } = expectData<{ backups: Backup[] }>(await owner.api.get(backupsPath), 200);
    const completed = backups.find((b) => b.status === 'completed');
    assert.ok(completed);
    // The link as given works after the others were refused: they were refused while it
    // was valid, for what was changed in them.
    const { link } = await withFreshLink(
      async () =>
        expectData<DownloadLink>(
          await owner.api.get(`${backupsPath}/${completed.id}/download`),
          200,
        ),
      async (issued) => {
        const url = new URL(issued.download_url);
        assert.ok(url.searchParams.get('X-Amz-Signature'), 'a pre-signed URL');
        const signature = url.searchParams.get('X-Amz-Signature') ?? '';
        const flipped = signature.startsWith('0')
          ? `1${signature.slice(1)}`
          : `0${signature.slice(1)}`;
        url.searchParams.set('X-Amz-Signature', flipped);
        assert.equal((await download(url.toString(), dir)).status, 403, 'tampered signature');
        const otherKey = new URL(issued.download_url);
        otherKey.pathname = otherKey.pathname.replace(completed.id, 'bkp_aaaaaaaaaaaaaaaaaaaa');
        assert.equal((await download(otherKey.toString(), dir)).status, 403, 'another object');
        assert.equal(
          (await download(issued.download_url, dir)).status,
          200,
          'the link as given works',
        );
      },
    );
    await sleep(Date.parse(link.expires_at) - Date.now() + 1500);
    assert.equal((await download(link.download_url, dir)).status, 403, 'expired');
  });

  it('answers 409 DATABASE_NOT_READY for a database that is not running', async () => {
    const created = await owner.api.post(`/projects/${project.id}/databases`, { name: 'fresh' });
    expectData(created, 201);
    // Asked at once: the database is still provisioning.
    expectError(
      await owner.api.post(`/projects/${project.id}/databases/fresh/backups`),
      409,
      'DATABASE_NOT_READY',
    );
  });

  it('answers 404 for unknown, malformed and foreign ids, and never shows another account', async () => {
    expectError(
      await owner.api.get(`${backupsPath}/bkp_aaaaaaaaaaaaaaaaaaaa`),
      404,
      'BACKUP_NOT_FOUND',
    );
    expectError(await owner.api.get(`${backupsPath}/not-an-id`), 404, 'BACKUP_NOT_FOUND');
    expectError(
      await owner.api.get(`${backupsPath}/bkp_aaaaaaaaaaaaaaaaaaaa/download`),
      404,
      'BACKUP_NOT_FOUND',
    );
    expectError(
      await owner.api.delete(`${backupsPath}/bkp_aaaaaaaaaaaaaaaaaaaa`),
      404,
      'BACKUP_NOT_FOUND',
    );
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/nothing/backups`),
      404,
      'DATABASE_NOT_FOUND',
    );
    const { backups } = expectData<{ backups: Backup[] }>(await owner.api.get(backupsPath), 200);
    const mine = backups[0];
    assert.ok(mine);
    // The stranger cannot reach the owner's project, nor the backup through a project of theirs.
    expectError(await stranger.api.get(`${backupsPath}/${mine.id}`), 404, 'PROJECT_NOT_FOUND');
    expectError(await stranger.api.post(backupsPath), 404, 'PROJECT_NOT_FOUND');
    const theirs = expectData<Project>(
      await stranger.api.post('/projects', { name: 'elsewhere' }),
      201,
    );
    await runningDatabase(stranger.api, theirs.id, 'ledger');
    const theirPath = `/projects/${theirs.id}/databases/ledger/backups`;
    expectError(await stranger.api.get(`${theirPath}/${mine.id}`), 404, 'BACKUP_NOT_FOUND');
    expectError(
      await stranger.api.get(`${theirPath}/${mine.id}/download`),
      404,
      'BACKUP_NOT_FOUND',
    );
    expectError(await stranger.api.delete(`${theirPath}/${mine.id}`), 404, 'BACKUP_NOT_FOUND');
    expectError(
      await owner.api.withToken(undefined).get(`${backupsPath}/${mine.id}`),
      401,
      'AUTH_REQUIRED',
    );
  });

  it('keeps ten manual backups on Free: the eleventh is 403 until one is deleted', async () => {
    const hoarder = await signIn(await newClient(), uniqueLogin('hoarder'));
    const own = expectData<Project>(await hoarder.api.post('/projects', { name: 'hoard' }), 201);
    await runningDatabase(hoarder.api, own.id, 'tiny');
    const path = `/projects/${own.id}/databases/tiny/backups`;
    // One at a time, as a careful user takes them; a failed one would not count.
    const takeOne = async (): Promise<Backup> => {
      const created = expectData<CreatedBackup>(await hoarder.api.post(path), 201);
      return waitForBackup(hoarder.api, path, created.id);
    };
    // The schedule may add an automated backup meanwhile: only manual ones count.
    const kept = async (): Promise<Backup[]> =>
      expectData<{ backups: Backup[] }>(await hoarder.api.get(path), 200).backups.filter(
        (b) => b.type === 'manual' && b.status !== 'failed',
      );
    while ((await kept()).length < 8) await takeOne();

    // Four at once for the last two places: the count and the insert are one step.
    const racing = await Promise.all(Array.from({ length: 4 }, () => hoarder.api.post(path)));
    assert.deepEqual(racing.map((r) => r.status).sort(), [201, 201, 403, 403]);
    const raced = racing.filter((r) => r.status === 201);
    for (const response of racing)
      if (response.status === 403) expectError(response, 403, 'QUOTA_EXCEEDED');
    // Pending backups count as much as completed ones.
    const refused = expectError(await hoarder.api.post(path), 403, 'QUOTA_EXCEEDED');
    assert.match(refused.message, /10 manual backups/);
    for (const response of raced)
      await waitForBackup(hoarder.api, path, expectData<CreatedBackup>(response, 201).id);
    while ((await kept()).length < 10) await takeOne();
    expectError(await hoarder.api.post(path), 403, 'QUOTA_EXCEEDED');
    assert.equal((await kept()).length, 10, 'nothing more was made');

    const oldest = (await kept()).at(-1);
    assert.ok(oldest);
    expectData(await hoarder.api.delete(`${path}/${oldest.id}`), 200);
    const another = expectData<CreatedBackup>(await hoarder.api.post(path), 201);
    expectError(await hoarder.api.post(path), 403, 'QUOTA_EXCEEDED');
    await waitForBackup(hoarder.api, path, another.id);
    expectData(await hoarder.api.delete(`/projects/${own.id}?force=true`), 200);
  });

  it('deletes a backup object first, then its record', async () => {
    const stack = await sharedStack();
    const bucket = stack.bucket();
    try {
      const created = expectData<CreatedBackup>(await owner.api.post(backupsPath), 201);
      await waitForBackup(owner.api, backupsPath, created.id);
      const key = `projects/${project.id}/databases/${databaseId}/base/${created.id}.tar.zst`;
      assert.equal((await bucket.list(key)).length, 1, 'the object is under its key');
      const deleted = expectData(await owner.api.delete(`${backupsPath}/${created.id}`), 200);
      assert.deepEqual(deleted, { id: created.id, deleted: true });
      assert.deepEqual(await bucket.list(key), []);
      expectError(await owner.api.get(`${backupsPath}/${created.id}`), 404, 'BACKUP_NOT_FOUND');
    } finally {
      bucket.close();
    }
  });

  it('removes every backup object of a deleted database, and of a force-deleted project', async () => {
    const stack = await sharedStack();
    const bucket = stack.bucket();
    try {
      const prefix = `projects/${project.id}/databases/${databaseId}/`;
      assert.ok((await bucket.list(prefix)).length >= 1);
      expectData(await owner.api.delete(`/projects/${project.id}/databases/ledger`), 200);
      // Removed by the database's removal job, after the answer.
      await eventually(async () =>
        assert.deepEqual(await bucket.list(prefix), [], 'objects of the database are gone'),
      );

      const doomed = expectData<Project>(
        await owner.api.post('/projects', { name: 'doomed' }),
        201,
      );
      const { database } = await runningDatabase(owner.api, doomed.id, 'ledger');
      const path = `/projects/${doomed.id}/databases/ledger/backups`;
      const created = expectData<CreatedBackup>(await owner.api.post(path), 201);
      await waitForBackup(owner.api, path, created.id);
      const doomedPrefix = `projects/${doomed.id}/databases/${database.id}/`;
      // The schedule may have added an automated backup of its own: this one is there.
      assert.equal(
        (await bucket.list(`${doomedPrefix}base/${created.id}.tar.zst`)).length,
        1,
        'the backup is stored',
      );
      expectData(await owner.api.delete(`/projects/${doomed.id}?force=true`), 200);
      await eventually(async () =>
        assert.deepEqual(await bucket.list(doomedPrefix), [], 'objects of the project are gone'),
      );
    } finally {
      bucket.close();
    }
  });
});
