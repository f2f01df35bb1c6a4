import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type {
  ConnectionDetails,
  CreatedBackup,
  CreatedPitrRestore,
  CreatedRestore,
  Database,
  Project,
  Restore,
  RestorePhase,
} from '@pgcloud/contracts';
import { RESTORE_PHASES } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { eventually, eventuallyDefined, signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { recoveryWindow, waitForArchive } from '../support/pitr.js';
import { assertWatchedToDone, waitForRestore, watchRestore } from '../support/restores.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

// About 300 MB of table and index, written as about as much WAL.
const ROWS = 2_400_000;
const COUNT_SQL = 'SELECT count(*) FROM bulk';

/**
 * Restores you can watch (README.md, "Restores"), on a database of a few hundred MB:
 * read every 200 ms, as a client showing progress would, while the stack writes a
 * restore's numbers every 100 ms (RESTORE_PROGRESS_INTERVAL_MS): its download here can
 * take less than a second.
 */
describe('restore progress on a database of a few hundred MB', () => {
  let owner: SignedIn;
  let project: Project;
  let connection: ConnectionDetails;
  let rows: string;
  /** After the load, before any backup but PITR's own: a PITR restore replays it all. */
  let loadedAt: string;
  let backupId: string;
  const path = () => `/projects/${project.id}/databases/bulk`;

  /** Watches a restore into a new database to its end; answers what was seen and the copy's rows. */
  const watchCopy = async (restoreId: string, copy: string): Promise<[Restore[], string]> => {
    const seen = await watchRestore(owner.api, path(), restoreId, 200);
    const details = expectData<ConnectionDetails>(
      await owner.api.get(`/projects/${project.id}/databases/${copy}/url`),
      200,
    );
    const copied = await psql(details.connection_string, COUNT_SQL);
    expectData(await owner.api.delete(`/projects/${project.id}/databases/${copy}`), 200);
    return [seen, copied];
  };

  before(async () => {
    await sharedStack();
    owner = await signIn(await newClient(), uniqueLogin('watcher'));
    project = expectData<Project>(await owner.api.post('/projects', { name: 'bulky' }), 201);
    ({ connection } = await runningDatabase(owner.api, project.id, 'bulk'));
    // PITR first: its base backup is small, and the load's WAL is what a PITR restore
    // replays (until the backup restore's test takes a backup after it).
    expectData(await owner.api.post(`${path()}/pitr/enable`, { retention_days: 1 }), 200);
    await waitForArchive(owner.api, `${path()}/pitr`);
    await psql(
      connection.connection_string,
      `CREATE TABLE bulk (id bigint PRIMARY KEY, a text NOT NULL, b text NOT NULL);
       INSERT INTO bulk SELECT g, md5(g::text), md5((-g)::text) FROM generate_series(1, ${ROWS}) g;`,
      180_000,
    );
    rows = await psql(connection.connection_string, COUNT_SQL);
    assert.equal(rows, String(ROWS));
    loadedAt = new Date().toISOString();
    await eventuallyDefined('the window covers the load', async () => {
      const window = await recoveryWindow(owner.api, `${path()}/pitr`);
      return window.to && window.to > loadedAt ? window : undefined;
    });
  });

  it('a PITR restore through the WAL of the load: segments counted as they replay, with an ETA', async () => {
    const created = expectData<CreatedPitrRestore>(
      await owner.api.post(`${path()}/pitr/restore`, {
        target_time: 'latest',
        target_database: 'bulk-pitr',
      }),
      201,
    );
    const [seen, copied] = await watchCopy(created.restore_id, 'bulk-pitr');
    assertWatchedToDone(seen);
    assert.equal(copied, rows);
    const last = seen.at(-1);
    assert.ok((last?.progress.wal_files_total ?? 0) >= 10, 'the load made WAL to replay');
    const replaying = seen.filter((r) => r.phase === 'replaying');
    assert.ok(
      replaying.some((r) => r.progress.eta_seconds !== null),
      `an ETA while replaying: ${JSON.stringify(replaying.map((r) => r.progress))}`,
    );
    assert.ok(
      replaying.some((r) => r.progress.wal_files_done > 0),
      'segments counted before replay ended',
    );
  });

  it('a backup restore: phases in order, numbers only growing, an ETA once data flows', async () => {
    const backup = expectData<CreatedBackup>(await owner.api.post(`${path()}/backups`), 201);
    const done = await waitForBackup(owner.api, `${path()}/backups`, backup.id, undefined, 300_000);
    assert.equal(done.status, 'completed', done.error);
    backupId = backup.id;
    const created = expectData<CreatedRestore>(
      await owner.api.post(`${path()}/backups/${backup.id}/restore`, {
        target_database: 'bulk-copy',
      }),
      201,
    );
    const [seen, copied] = await watchCopy(created.restore_id, 'bulk-copy');
    assertWatchedToDone(seen);
    assert.equal(copied, rows);
    const downloading = seen.filter((r) => r.phase === 'downloading');
    assert.ok(
      downloading.some((r) => r.progress.bytes_done > 0 && r.progress.eta_seconds !== null),
      `an ETA while downloading: ${JSON.stringify(downloading.map((r) => r.progress))}`,
    );
    assert.equal(seen.at(-1)?.progress.eta_seconds, 0);
  });

  it('cancels restores of both kinds while they download and while they replay, in place and into a new database', async () => {
    const stack = await sharedStack();
    const source = expectData<Database>(await owner.api.get(path()), 200);
    const serverDir = join(
      stack.env['DATA_DIR'] ?? '',
      'local',
      'servers',
      source.platform_service_id,
    );
    for (const kind of ['backup', 'pitr'] as const)
      for (const phase of ['downloading', 'replaying'] as const)
        for (const into of [undefined, `bulk-${kind}-${phase}`]) {
          const what = `${kind} restore ${into ? `into ${into}` : 'in place'}, during ${phase}`;
          const body = into === undefined ? {} : { target_database: into };
          const created = expectData<CreatedRestore>(
            kind === 'backup'
              ? await owner.api.post(`${path()}/backups/${backupId}/restore`, body)
              : await owner.api.post(`${path()}/pitr/restore`, { ...body, target_time: loadedAt }),
            201,
          );
          await untilPhase(created.restore_id, phase, what);
          // A PITR restore through its own route, as the API lists it.
          const cancelPath = `${path()}${kind === 'pitr' ? '/pitr' : ''}/restores`;
          const answered = expectData<Restore>(
            await owner.api.post(`${cancelPath}/${created.restore_id}/cancel`),
            200,
          );
          assert.ok(['running', 'pending', 'cancelled'].includes(answered.status), what);
          const ended = await waitForRestore(owner.api, path(), created.restore_id, [
            'cancelled',
            'completed',
            'failed',
          ]);
          assert.equal(ended.status, 'cancelled', `${what}: ${ended.error ?? ''}`);
          assert.equal(ended.error, undefined);
          // The source as it was, and writable.
          await waitForStatus(owner.api, project.id, 'bulk', ['running']);
          assert.equal(await psql(connection.connection_string, COUNT_SQL), rows, what);
          await psql(connection.connection_string, 'INSERT INTO bulk VALUES (0, $$a$$, $$b$$)');
          await psql(connection.connection_string, 'DELETE FROM bulk WHERE id = 0');
          // Nothing of it left: no database made for it, no work beside the live data.
          if (into)
            await eventually(async () =>
              expectError(
                await owner.api.get(`/projects/${project.id}/databases/${into}`),
                404,
                'DATABASE_NOT_FOUND',
              ),
            );
          await eventually(() =>
            assert.deepEqual(
              readdirSync(serverDir).filter((name) => RESTORE_WORK.includes(name)),
              [],
              `${what}: no restore work left`,
            ),
          );
        }
    const completed = expectData<{ restores: Restore[] }>(
      await owner.api.get(`${path()}/restores`),
      200,
    ).restores.find((r) => r.status === 'completed');
    assert.ok(completed);
    expectError(
      await owner.api.post(`${path()}/restores/${completed.id}/cancel`),
      409,
      'RESTORE_NOT_CANCELLABLE',
    );
    const viaPitr = await owner.api.post(`${path()}/pitr/restores/${completed.id}/cancel`);
    if (completed.kind === 'pitr') expectError(viaPitr, 409, 'RESTORE_NOT_CANCELLABLE');
    else expectError(viaPitr, 404, 'RESTORE_NOT_FOUND');
    expectError(
      await owner.api.post(`${path()}/restores/rstr_aaaaaaaaaaaaaaaaaaaa/cancel`),
      404,
      'RESTORE_NOT_FOUND',
    );
  });

  /** Reads a restore every 25 ms until it shows `phase`; fails once it is past it. */
  const untilPhase = async (restoreId: string, phase: RestorePhase, what: string) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const restore = expectData<Restore>(
        await owner.api.get(`${path()}/restores/${restoreId}`),
        200,
      );
      if (restore.phase === phase) return;
      assert.ok(
        RESTORE_PHASES.indexOf(restore.phase) < RESTORE_PHASES.indexOf(phase) &&
          ['pending', 'running'].includes(restore.status),
        `${what}: ${restore.status} in ${restore.phase} before it was seen ${phase}`,
      );
      assert.ok(Date.now() < deadline, `${what}: never ${phase}`);
      await sleep(25);
    }
  };
});

/** What a restore keeps in a server's folder beside the live data while it runs. */
const RESTORE_WORK = ['pgdata.restore', 'pgdata.previous', 'pgdata.trash', 'rsock', 'wal.restore'];
