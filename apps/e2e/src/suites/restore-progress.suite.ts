import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  ConnectionDetails,
  CreatedPitrRestore,
  CreatedRestore,
  Restore,
} from '@pgcloud/contracts';
import { expectData, expectError } from '../support/assertions.js';
import type { BulkDatabase } from '../support/bulk-database.js';
import { COUNT_SQL, bulkBackup, bulkDatabase } from '../support/bulk-database.js';
import { psql } from '../support/databases.js';
import { assertWatchedToDone, watchRestore } from '../support/restores.js';

/**
 * Restores you can watch (docs/api/restores.md#a-restore), on a database of a few hundred MB:
 * read every 200 ms, as a client showing progress would, while the stack writes a
 * restore's numbers every 100 ms (RESTORE_PROGRESS_INTERVAL_MS): its download here can
 * take less than a second. Cancelling them is restore-cancellation's.
 */
describe('restore progress on a database of a few hundred MB', () => {
  let bulk: BulkDatabase;
  const path = () => bulk.path;

  /** Watches a restore into a new database to its end; answers what was seen and the copy's rows. */
  const watchCopy = async (restoreId: string, copy: string): Promise<[Restore[], string]> => {
    const seen = await watchRestore(bulk.owner.api, path(), restoreId, 200);
    const details = expectData<ConnectionDetails>(
      await bulk.owner.api.get(`/projects/${bulk.project.id}/databases/${copy}/url`),
      200,
    );
    const copied = await psql(details.connection_string, COUNT_SQL);
    expectData(await bulk.owner.api.delete(`/projects/${bulk.project.id}/databases/${copy}`), 200);
    return [seen, copied];
  };

  before(async () => {
    bulk = await bulkDatabase('watcher');
  });

  it('a PITR restore through the WAL of the load: segments counted as they replay, with an ETA', async () => {
    const created = expectData<CreatedPitrRestore>(
      await bulk.owner.api.post(`${path()}/pitr/restore`, {
        target_time: 'latest',
        target_database: 'bulk-pitr',
      }),
      201,
    );
    const [seen, copied] = await watchCopy(created.restore_id, 'bulk-pitr');
    assertWatchedToDone(seen);
    assert.equal(copied, bulk.rows);
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
    const backupId = await bulkBackup(bulk);
    const created = expectData<CreatedRestore>(
      await bulk.owner.api.post(`${path()}/backups/${backupId}/restore`, {
        target_database: 'bulk-copy',
      }),
      201,
    );
    const [seen, copied] = await watchCopy(created.restore_id, 'bulk-copy');
    assertWatchedToDone(seen);
    assert.equal(copied, bulk.rows);
    const downloading = seen.filter((r) => r.phase === 'downloading');
    assert.ok(
      downloading.some((r) => r.progress.bytes_done > 0 && r.progress.eta_seconds !== null),
      `an ETA while downloading: ${JSON.stringify(downloading.map((r) => r.progress))}`,
    );
    assert.equal(seen.at(-1)?.progress.eta_seconds, 0);
  });

  it('refuses to cancel a restore that completed, or one that does not exist', async () => {
    const completed = expectData<{ restores: Restore[] }>(
      await bulk.owner.api.get(`${path()}/restores`),
      200,
    ).restores.find((r) => r.status === 'completed');
    assert.ok(completed);
    expectError(
      await bulk.owner.api.post(`${path()}/restores/${completed.id}/cancel`),
      409,
      'RESTORE_NOT_CANCELLABLE',
    );
    const viaPitr = await bulk.owner.api.post(`${path()}/pitr/restores/${completed.id}/cancel`);
    if (completed.kind === 'pitr') expectError(viaPitr, 409, 'RESTORE_NOT_CANCELLABLE');
    else expectError(viaPitr, 404, 'RESTORE_NOT_FOUND');
    expectError(
      await bulk.owner.api.post(`${path()}/restores/rstr_aaaaaaaaaaaaaaaaaaaa/cancel`),
      404,
      'RESTORE_NOT_FOUND',
    );
  });
});
