import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { buffer } from 'node:stream/consumers';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type {
  CreatedBackup,
  CreatedRestore,
  Database,
  Drill,
  DrillList,
  Project,
  Restore,
} from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import type { SignedIn } from '@pgcloud/testing';
import { eventuallyDefined, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { waitForRestore } from '../support/restores.js';
import { waitForArchive } from '../support/pitr.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

const ROWS_SQL = `CREATE TABLE orders (id serial PRIMARY KEY, note text NOT NULL);
  CREATE INDEX orders_note ON orders (note);
  INSERT INTO orders (note) SELECT md5(g::text) FROM generate_series(1, 20000) g;`;

const BIG_ROWS = 300_000;
const BIG_ROWS_SQL = `CREATE TABLE orders (id serial PRIMARY KEY, note text NOT NULL);
  INSERT INTO orders (note) SELECT md5(g::text) FROM generate_series(1, ${BIG_ROWS}) g;
  CREATE INDEX orders_note ON orders (note);`;

/**
 * Restore drills (docs/api/drills.md): a database's newest backup, and with PITR its
 * archive, restored into a scratch server and checked, without touching the database; a
 * corrupted backup found out by name; nothing of a drill left behind.
 */
describe('restore drills: backups proven restorable', () => {
  let stack: Stack;
  let owner: SignedIn;
  let project: Project;
  let metadata: pg.Client;

  const drillsPath = (name: string) => `/projects/${project.id}/databases/${name}/drills`;
  const waitForDrill = (name: string, id: string): Promise<Drill> =>
    eventuallyDefined(
      `drill ${id} ended`,
      async () => {
        const drill = expectData<Drill>(await owner.api.get(`${drillsPath(name)}/${id}`), 200);
        return drill.status === 'passed' || drill.status === 'failed' ? drill : undefined;
      },
      { timeoutMs: 60_000 },
    );
  /** The drill events the provisioner sent, by drill. */
  const sent = async (event: string, drillId: string) => {
    const { rows } = await metadata.query<{ payload: Record<string, unknown> }>(
      `SELECT payload FROM provisioner.outbox
        WHERE event = $1 AND sent_at IS NOT NULL AND payload->>'drill_id' = $2`,
      [event, drillId],
    );
    return rows.map((row) => row.payload);
  };
  /** Nothing of a drill stays: no scratch directory, no server running on it. */
  const assertNothingLeft = (drillId: string) => {
    const drillsDir = join(stack.dataDir, 'local', 'drills');
    const left = existsSync(drillsDir) ? readdirSync(drillsDir) : [];
    assert.ok(!left.includes(drillId), `the scratch directory of ${drillId} is gone`);
    const working = commandLines().filter((line) => line.includes(drillId));
    assert.deepEqual(working, [], 'no process works on the drill any more');
  };

  before(async () => {
    stack = await sharedStack();
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
    owner = await signIn(await newClient(), uniqueLogin('driller'));
    project = expectData<Project>(await owner.api.post('/projects', { name: 'drilled' }), 201);
  });

  after(async () => {
    await metadata?.end();
  });

  it('passes every check of a PITR drill and proves the database restorable', async () => {
    const { connection } = await runningDatabase(owner.api, project.id, 'ledger');
    await psql(connection.connection_string, ROWS_SQL, 60_000);
    const pitrPath = `/projects/${project.id}/databases/ledger/pitr`;
    expectData(await owner.api.post(`${pitrPath}/enable`, { retention_days: 1 }), 200);
    await waitForArchive(owner.api, pitrPath);
    await psql(connection.connection_string, "INSERT INTO orders (note) VALUES ('after the base')");
    const before = expectData<Database>(
      await owner.api.get(`/projects/${project.id}/databases/ledger`),
      200,
    );
    assert.equal(before.last_proven_restorable, null);

    const created = expectData<Drill>(await owner.api.post(drillsPath('ledger')), 201);
    assert.match(created.id, /^drl_[0-9a-z]{20}$/);
    assert.equal(created.status, 'pending');
    assert.equal(created.kind, 'manual');
    // One at a time per database.
    expectError(await owner.api.post(drillsPath('ledger')), 409, 'OPERATION_IN_PROGRESS');

    const drill = await waitForDrill('ledger', created.id);
    assert.equal(drill.status, 'passed', JSON.stringify(drill.checks));
    assert.deepEqual(
      drill.checks.map((check) => [check.name, check.passed]),
      [
        ['consistent', true],
        ['target_reached', true],
        ['amcheck', true],
        ['wal_chain', true],
      ],
    );
    assert.match(drill.backup_id ?? '', /^bkp_/);
    assert.ok(drill.target_time && Date.parse(drill.target_time) >= Date.parse(created.started_at));
    assert.match(drill.target_lsn ?? '', /^[0-9A-F]+\/[0-9A-F]+$/);
    assert.ok((drill.restore_seconds ?? 0) > 0);
    assert.equal(drill.phase, 'done');

    const proven = expectData<Database>(
      await owner.api.get(`/projects/${project.id}/databases/ledger`),
      200,
    ).last_proven_restorable;
    assert.equal(proven?.drill_id, drill.id);
    assert.equal(proven?.backup_id, drill.backup_id);
    assert.equal(proven?.target_time, drill.target_time);
    assert.equal(proven?.restore_seconds, drill.restore_seconds);
    assert.equal((await sent('drill.passed', drill.id)).length, 1);

    const { drills } = expectData<DrillList>(await owner.api.get(drillsPath('ledger')), 200);
    assert.deepEqual(
      drills.map((d) => d.id),
      [drill.id],
    );
    // The database was not touched: its rows and its writes go on.
    assert.equal(await psql(connection.connection_string, 'SELECT count(*) FROM orders'), '20001');
    assertNothingLeft(drill.id);
  });

  it('fails a drill of a corrupted backup, naming the check, and says so', async () => {
    const { connection } = await runningDatabase(owner.api, project.id, 'broken');
    await psql(connection.connection_string, ROWS_SQL, 60_000);
    const backupsPath = `/projects/${project.id}/databases/broken/backups`;
    const made = expectData<CreatedBackup>(await owner.api.post(backupsPath), 201);
    const backup = await waitForBackup(owner.api, backupsPath, made.id);
    assert.equal(backup.status, 'completed');
    // The object in the store is changed behind the archive's back: one byte flipped.
    const bucket = stack.bucket();
    const [object] = (await bucket.list(`projects/${project.id}/`)).filter((o) =>
      o.key.includes(backup.id),
    );
    assert.ok(object, 'the backup is in the object store');
    const bytes = await buffer(await bucket.getStream(object.key));
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    await bucket.put(object.key, bytes);

    const created = expectData<Drill>(await owner.api.post(drillsPath('broken')), 201);
    const drill = await waitForDrill('broken', created.id);
    assert.equal(drill.status, 'failed');
    assert.equal(drill.backup_id, backup.id);
    const failed = drill.checks.find((check) => !check.passed);
    assert.equal(failed?.name, 'consistent');
    assert.match(failed?.detail ?? '', /not the one archived/);
    assert.match(drill.error ?? '', /^Check consistent failed/);
    const [event] = await eventuallyDefined('drill.failed sent', async () => {
      const found = await sent('drill.failed', drill.id);
      return found.length > 0 ? found : undefined;
    });
    assert.equal(event?.['status'], 'failed');
    assert.equal(event?.['backup_id'], backup.id);
    const database = expectData<Database>(
      await owner.api.get(`/projects/${project.id}/databases/broken`),
      200,
    );
    assert.equal(database.last_proven_restorable, null);
    assertNothingLeft(drill.id);
  });

  it('changes nothing for the owner, who restores, writes and backs up meanwhile', async () => {
    const { connection } = await runningDatabase(owner.api, project.id, 'busy');
    const url = connection.connection_string;
    await psql(url, BIG_ROWS_SQL, 60_000);
    const databasePath = `/projects/${project.id}/databases/busy`;
    const first = expectData<CreatedBackup>(await owner.api.post(`${databasePath}/backups`), 201);
    await waitForBackup(owner.api, `${databasePath}/backups`, first.id);

    const created = expectData<Drill>(await owner.api.post(drillsPath('busy')), 201);
    await eventuallyDefined('the drill downloads', async () => {
      const drill = expectData<Drill>(
        await owner.api.get(`${drillsPath('busy')}/${created.id}`),
        200,
      );
      return drill.phase !== 'queued' ? drill : undefined;
    });
    // Writes and a backup go on as ever.
    await psql(
      url,
      "INSERT INTO orders (note) SELECT 'during ' || g FROM generate_series(1, 500) g",
    );
    const second = expectData<CreatedBackup>(await owner.api.post(`${databasePath}/backups`), 201);
    const backup = await waitForBackup(owner.api, `${databasePath}/backups`, second.id);
    assert.equal(backup.status, 'completed');
    // An in-place restore starts at once, whatever the drill does.
    const restore = expectData<CreatedRestore>(
      await owner.api.post(`${databasePath}/backups/${second.id}/restore`),
      201,
    );
    const running = await eventuallyDefined(
      'the restore runs',
      async () => {
        const found = expectData<Restore>(
          await owner.api.get(`${databasePath}/restores/${restore.restore_id}`),
          200,
        );
        return found.status !== 'pending' ? found : undefined;
      },
      { timeoutMs: 5000 },
    );
    assert.notEqual(running.status, 'failed', running.error);
    const done = await waitForRestore(owner.api, databasePath, restore.restore_id);
    assert.equal(done.status, 'completed', done.error);
    await waitForStatus(owner.api, project.id, 'busy', ['running']);
    assert.equal(
      await psql(
        url,
        "SELECT count(*) || '|' || count(*) FILTER (WHERE note LIKE 'during %') FROM orders",
      ),
      `${BIG_ROWS + 500}|500`,
      'every row the owner wrote before the backup is there',
    );
    const drill = await waitForDrill('busy', created.id);
    assert.equal(drill.status, 'passed', JSON.stringify(drill.checks));
    assert.equal(drill.backup_id, first.id);
    const { restores } = expectData<{ restores: Restore[] }>(
      await owner.api.get(`${databasePath}/restores`),
      200,
    );
    assert.deepEqual(
      restores.map((r) => r.id),
      [restore.restore_id],
      'a drill is no restore',
    );
    assertNothingLeft(drill.id);
  });

  it('refuses what it cannot do in the envelope', async () => {
    expectError(await owner.api.get(`${drillsPath('ledger')}/drl_nothing`), 404, 'DRILL_NOT_FOUND');
    expectError(await owner.api.post(drillsPath('missing')), 404, 'DATABASE_NOT_FOUND');
    const stranger = await signIn(await newClient(), uniqueLogin('stranger'));
    expectError(await stranger.api.get(drillsPath('ledger')), 404, 'PROJECT_NOT_FOUND');
  });
});

/** The command lines of the machine's processes, arguments joined by spaces. */
function commandLines(): string[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      } catch {
        return ''; // ended meanwhile
      }
    });
}
