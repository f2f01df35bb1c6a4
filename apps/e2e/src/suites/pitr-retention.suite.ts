import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  Backup,
  ConnectionDetails,
  CreatedPitrRestore,
  CreatedRestore,
  Database,
  Project,
  RecoveryWindow,
  Restore,
} from '@pgcloud/contracts';
import { parseLsn, segmentOf } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, signIn, eventually, eventuallyDefined } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { psql, runningDatabase } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { allSegments, recoveryWindow, waitForArchive } from '../support/pitr.js';
import { waitForRestore } from '../support/restores.js';
import { ownStack } from '../support/shared-stack.js';

const DAY_S = 12; // retention_days 1 lasts 12 s here
const PERIOD_S = 5; // an automated backup every 5 s
const BACKUP_EXPIRY_S = 6;
// Writes for longer than a retention day and a period, so backups and WAL fall out of it.
const RUN_MS = 28_000;
const FILL_SQL =
  'INSERT INTO filler (note) SELECT repeat(md5(g::text), 30) FROM generate_series(1, 20000) g';

const segno = (name: string) =>
  BigInt(`0x${name.slice(8, 16)}`) * 256n + BigInt(`0x${name.slice(16, 24)}`);

/** Retention with short days: old WAL and expired backups go, the window's base stays. */
describe('PITR retention: the sweeps keep exactly what the window needs', () => {
  let stack: Stack;
  let owner: SignedIn;
  let project: Project;
  let database: Database;
  let connection: ConnectionDetails;
  let bucket: ObjectStore;
  let pitrPath: string;
  let databasePath: string;

  before(async () => {
    stack = await ownStack({
      PITR_RETENTION_DAY_SECONDS: String(DAY_S),
      PITR_SWEEP_INTERVAL_SECONDS: '2',
      BACKUP_SCHEDULE_INTERVAL_SECONDS: String(PERIOD_S),
      BACKUP_CHECK_INTERVAL_SECONDS: '1',
      BACKUP_RETENTION_FREE_SECONDS: String(BACKUP_EXPIRY_S),
    });
    bucket = stack.bucket();
    owner = await signIn(new ApiClient(stack.baseUrl), 'keeper');
    project = expectData<Project>(await owner.api.post('/projects', { name: 'kept' }), 201);
    ({ database, connection } = await runningDatabase(owner.api, project.id, 'kept'));
    databasePath = `/projects/${project.id}/databases/kept`;
    pitrPath = `${databasePath}/pitr`;
    await psql(connection.connection_string, 'CREATE TABLE filler (note text)');
    expectData(await owner.api.post(`${pitrPath}/enable`, { retention_days: 1 }), 200);
    await waitForArchive(owner.api, pitrPath);
  });

  after(async () => {
    bucket?.close();
    await stack?.stop();
  });

  it('deletes old WAL and expired backups, keeps the base the window starts from, and restores to `from`', async () => {
    const started = Date.now();
    while (Date.now() - started < RUN_MS) {
      await psql(connection.connection_string, FILL_SQL, 60_000);
      await sleep(3000);
    }
    // The window's base moves on every PERIOD_S; the sweeps (every 1-2 s) follow it, keeping
    // what the previous base needed a moment longer. Look until they have caught up, and ask
    // for the restore to `from` right then: asked just after the base moved on, `from` is
    // outside the window (422, nothing held) and the next round looks again.
    const swept = await eventually(
      async () => {
        const asked = Date.now();
        const window: RecoveryWindow = await recoveryWindow(owner.api, pitrPath);
        const from = Date.parse(window.from ?? '');
        const { backups } = expectData<{ backups: Backup[] }>(
          await owner.api.get(`${databasePath}/backups`),
          200,
        );
        const base = backups.find((b) => b.completed_at && Date.parse(b.completed_at) === from);
        assert.ok(base, `the base of the window from ${window.from} is listed`);
        const older = backups.filter((b) => Date.parse(b.completed_at ?? b.created_at) < from);
        assert.deepEqual(
          older.map((b) => b.id),
          [],
          'the backups before the base are gone',
        );
        const baseSegment = segmentOf(parseLsn(base.start_lsn ?? ''));
        const { segments } = await allSegments(owner.api, pitrPath);
        const first = segments[0]?.filename;
        assert.ok(
          first && segno(first) === baseSegment,
          `the WAL before the base is gone (${first})`,
        );
        const stored = (await bucket.list(`projects/${project.id}/databases/${database.id}/wal/`))
          // A whole segment's object, or a piece of one: named after its segment.
          .map((o) => o.key.slice(o.key.lastIndexOf('/') + 1).slice(0, 24));
        assert.ok(stored.length > 0, 'segments are stored');
        assert.deepEqual(
          stored.filter((name) => segno(name) < baseSegment),
          [],
          'the objects before the base are gone',
        );
        const answer = await owner.api.post(`${pitrPath}/restore`, {
          target_time: new Date(from).toISOString(),
          target_database: 'kept-from',
        });
        assert.notEqual(answer.status, 422, `from left the window: ${JSON.stringify(answer.body)}`);
        return { window, from, base, backups, asked, answer };
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const { window, from, base, backups, asked } = swept;
    const pitr = expectData<CreatedPitrRestore>(swept.answer, 201);
    const now = Date.now();
    assert.ok(from <= now - DAY_S * 1000, `from ${window.from} reaches back a whole retention day`);
    // Not older than needed: the newest backup a whole retention day old when the window was
    // asked for (whatever the pace at which backups were made and completed).
    const skipped = backups.filter((b) => {
      const completed = b.status === 'completed' ? Date.parse(b.completed_at ?? '') : NaN;
      return completed > from && completed <= asked - DAY_S * 1000;
    });
    assert.deepEqual(
      skipped.map((b) => b.id),
      [],
      `from ${window.from} is the newest backup a retention day old`,
    );
    assert.ok(Date.parse(base.expires_at ?? '') < now, 'the base is kept although it has expired');

    const restored: Restore = await waitForRestore(owner.api, databasePath, pitr.restore_id);
    assert.equal(restored.status, 'completed', restored.error);
    const copy = expectData<ConnectionDetails>(
      await owner.api.get(`/projects/${project.id}/databases/kept-from/url`),
      200,
    );
    assert.ok(Number(await psql(copy.connection_string, 'SELECT count(*) FROM filler')) > 0);
    const byBackup = expectData<CreatedRestore>(
      await owner.api.post(`${databasePath}/backups/${base.id}/restore`, {
        target_database: 'kept-base',
      }),
      201,
    );
    const fromBackup = await eventuallyDefined(
      'the base backup restores',
      async () => {
        const r = expectData<Restore>(
          await owner.api.get(`${databasePath}/restores/${byBackup.restore_id}`),
          200,
        );
        return r.status === 'completed' || r.status === 'failed' ? r : undefined;
      },
      { timeoutMs: 180_000 },
    );
    assert.equal(fromBackup.status, 'completed', fromBackup.error);
  });
});
