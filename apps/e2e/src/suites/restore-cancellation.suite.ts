import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { CreatedRestore, Database, Restore, RestorePhase } from '@pgcloud/contracts';
import { RESTORE_PHASES } from '@pgcloud/contracts';
import { eventually } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import type { BulkDatabase } from '../support/bulk-database.js';
import { COUNT_SQL, bulkBackup, bulkDatabase } from '../support/bulk-database.js';
import { psql, waitForStatus } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { waitForRestore } from '../support/restores.js';
import { sharedStack } from '../support/shared-stack.js';

/**
 * Restores cancelled at each phase worth stopping, on a database of a few hundred MB (so
 * each phase lasts long enough to be caught): of a backup and to a point in time, in place
 * and into a new database. The source stays as it was, and nothing of the restore stays.
 */
describe('restore cancellation on a database of a few hundred MB', () => {
  let bulk: BulkDatabase;
  let backupId: string;
  const path = () => bulk.path;

  before(async () => {
    bulk = await bulkDatabase('canceller');
    backupId = await bulkBackup(bulk);
  });

  it('cancels both kinds while they download and while they replay, in place and into a new database', async () => {
    const stack = await sharedStack();
    const source = expectData<Database>(await bulk.owner.api.get(path()), 200);
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
              ? await bulk.owner.api.post(`${path()}/backups/${backupId}/restore`, body)
              : await bulk.owner.api.post(`${path()}/pitr/restore`, {
                  ...body,
                  target_time: bulk.loadedAt,
                }),
            201,
          );
          await untilPhase(created.restore_id, phase, what);
          // A PITR restore through its own route, as the API lists it.
          const cancelPath = `${path()}${kind === 'pitr' ? '/pitr' : ''}/restores`;
          const answered = expectData<Restore>(
            await bulk.owner.api.post(`${cancelPath}/${created.restore_id}/cancel`),
            200,
          );
          assert.ok(['running', 'pending', 'cancelled'].includes(answered.status), what);
          const ended = await waitForRestore(bulk.owner.api, path(), created.restore_id, [
            'cancelled',
            'completed',
            'failed',
          ]);
          assert.equal(ended.status, 'cancelled', `${what}: ${ended.error ?? ''}`);
          assert.equal(ended.error, undefined);
          // The source as it was, and writable.
          await waitForStatus(bulk.owner.api, bulk.project.id, 'bulk', ['running']);
          assert.equal(await psql(bulk.connection.connection_string, COUNT_SQL), bulk.rows, what);
          await psql(
            bulk.connection.connection_string,
            'INSERT INTO bulk VALUES (0, $$a$$, $$b$$)',
          );
          await psql(bulk.connection.connection_string, 'DELETE FROM bulk WHERE id = 0');
          // Nothing of it left: no database made for it, no work beside the live data.
          if (into)
            await eventually(async () =>
              expectError(
                await bulk.owner.api.get(`/projects/${bulk.project.id}/databases/${into}`),
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
  });

  /** Reads a restore every 25 ms until it shows `phase`; fails once it is past it. */
  const untilPhase = async (restoreId: string, phase: RestorePhase, what: string) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const restore = expectData<Restore>(
        await bulk.owner.api.get(`${path()}/restores/${restoreId}`),
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
