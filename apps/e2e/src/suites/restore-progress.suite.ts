import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  ConnectionDetails,
  CreatedBackup,
  CreatedPitrRestore,
  CreatedRestore,
  Project,
  Restore,
} from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase } from '../support/databases.js';
import { waitForArchive } from '../support/pitr.js';
import { assertWatchedToDone, watchRestore } from '../support/restores.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

// About 300 MB of table and index, written as about as much WAL.
const ROWS = 2_400_000;
const COUNT_SQL = 'SELECT count(*) FROM bulk';

/**
 * Restores you can watch (spec/decisions.md section 6), on a database of a few hundred MB:
 * read every 500 ms, as a client showing progress would.
 */
describe('restore progress on a database of a few hundred MB', () => {
  let owner: SignedIn;
  let project: Project;
  let connection: ConnectionDetails;
  let rows: string;
  const path = () => `/projects/${project.id}/databases/bulk`;

  /** Watches a restore into a new database to its end; answers what was seen and the copy's rows. */
  const watchCopy = async (restoreId: string, copy: string): Promise<[Restore[], string]> => {
    const seen = await watchRestore(owner.api, path(), restoreId, 500);
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
});
