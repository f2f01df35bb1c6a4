import assert from 'node:assert/strict';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import type {
  ArchiveHealth,
  ConnectionDetails,
  Database,
  PitrConfig,
  Project,
} from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import type { ObjectStore } from '@pgcloud/storage';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, eventuallyDefined, signIn } from '@pgcloud/testing';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { psql, runningDatabase } from '../support/databases.js';
import { allSegments, receivewalOf, waitForArchive } from '../support/pitr.js';
import { ownStack } from '../support/shared-stack.js';

const STALE_SECONDS = 4;
// About 20 MB of WAL: a segment completes.
const FILL_SQL =
  'INSERT INTO filler (note) SELECT repeat(md5(g::text), 30) FROM generate_series(1, 20000) g';

/**
 * Archive health on a stack of its own that checks every second (docs/api/pitr.md#archive-health):
 * a receiver that stops turns the archive stale, a segment taken from the object store
 * breaks it, and each change is announced.
 */
describe('PITR archive health: checked in the object store', () => {
  let stack: Stack;
  let owner: SignedIn;
  let database: Database;
  let connection: ConnectionDetails;
  let bucket: ObjectStore;
  let metadata: pg.Client;
  let pitrPath: string;

  const health = async (): Promise<ArchiveHealth | null | undefined> =>
    expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200).archive;
  const waitForState = (
    state: ArchiveHealth['state'],
    timeoutMs = 30_000,
  ): Promise<ArchiveHealth> =>
    eventuallyDefined(
      `the archive is ${state}`,
      async () => {
        const found = await health();
        return found?.state === state ? found : undefined;
      },
      { timeoutMs },
    );
  /** The payloads of an event pitr-worker sent for this database. */
  const sent = async (event: string): Promise<Record<string, unknown>[]> => {
    const { rows } = await metadata.query<{ payload: Record<string, unknown> }>(
      `SELECT payload FROM pitr.outbox
        WHERE event = $1 AND sent_at IS NOT NULL AND payload->>'database_id' = $2 ORDER BY id`,
      [event, database.id],
    );
    return rows.map((row) => row.payload);
  };
  const waitForEvent = (event: string, count = 1): Promise<Record<string, unknown>[]> =>
    eventuallyDefined(
      `${event} sent`,
      async () => {
        const payloads = await sent(event);
        return payloads.length >= count ? payloads : undefined;
      },
      { timeoutMs: 10_000 },
    );

  before(async () => {
    stack = await ownStack({
      PITR_ARCHIVE_CHECK_SECONDS: '1',
      ARCHIVE_STALE_SECONDS: String(STALE_SECONDS),
    });
    bucket = stack.bucket();
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
    owner = await signIn(new ApiClient(stack.baseUrl), 'archivist');
    const project = expectData<Project>(await owner.api.post('/projects', { name: 'kept' }), 201);
    ({ database, connection } = await runningDatabase(owner.api, project.id, 'kept'));
    pitrPath = `/projects/${project.id}/databases/kept/pitr`;
    await psql(connection.connection_string, 'CREATE TABLE filler (note text)');
    expectData(await owner.api.post(`${pitrPath}/enable`, { retention_days: 1 }), 200);
    await waitForArchive(owner.api, pitrPath);
    await psql(connection.connection_string, FILL_SQL, 60_000);
    await eventuallyDefined('a segment archived', async () => {
      const { segments } = await allSegments(owner.api, pitrPath);
      return segments.length > 0 ? segments : undefined;
    });
  });

  after(async () => {
    await metadata?.end();
    bucket?.close();
    await stack?.stop();
  });

  it('is healthy while the receiver keeps up, idle or written to', async () => {
    const found = await waitForState('healthy');
    assert.equal(found.problem, undefined);
    assert.ok(found.lag_seconds >= 0);
    assert.ok(Date.parse(found.checked_at) <= Date.now());
    // Idle longer than the stale threshold: nothing to archive is not stale.
    await new Promise((resolve) => setTimeout(resolve, (STALE_SECONDS + 3) * 1000));
    await psql(connection.connection_string, 'INSERT INTO filler VALUES (1)');
    const idle = await health();
    assert.equal(idle?.state, 'healthy');
    assert.deepEqual(await sent('archive.stale'), []);
  });

  it('turns stale when the receiver stops while the primary writes, and healthy again', async () => {
    const receiver = await receivewalOf(database.id);
    assert.ok(receiver, 'pg_receivewal runs for the database');
    process.kill(receiver.pid, 'SIGSTOP');
    try {
      await psql(connection.connection_string, 'INSERT INTO filler VALUES (2)');
      const stale = await waitForState('stale');
      assert.match(stale.problem ?? '', /nothing new reached the object store/);
      assert.ok(stale.lag_seconds > STALE_SECONDS);
      const [event] = await waitForEvent('archive.stale');
      assert.equal(event?.['state'], 'stale');
    } finally {
      process.kill(receiver.pid, 'SIGCONT');
    }
    await waitForState('healthy');
    const [event] = await waitForEvent('archive.healthy');
    assert.equal(event?.['state'], 'healthy');
  });

  it('turns broken when a segment goes missing from the object store, naming it', async () => {
    const { segments } = await allSegments(owner.api, pitrPath);
    const victim = segments[0]?.filename ?? '';
    const prefix = `projects/${database.project_id}/databases/${database.id}/wal/`;
    const objects = (await bucket.list(prefix)).filter((o) => o.key.includes(victim));
    assert.ok(objects.length > 0, `the objects of ${victim} are listed`);
    const bodies = await Promise.all(
      objects.map(async (o) => ({ key: o.key, body: await buffer(await bucket.getStream(o.key)) })),
    );
    await bucket.deleteKeys(objects.map((o) => o.key));
    const whole = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    const broken = await waitForState('broken');
    assert.equal(broken.problem, `segment ${victim} is missing from the object store`);
    const [event] = await waitForEvent('archive.broken');
    assert.equal(event?.['problem'], broken.problem);
    // The window stops before the missing segment (here the first: nothing after the base
    // backup can be reached), and a restore past it, `latest` included, is refused.
    const config = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.ok(whole.recovery_window, 'the window was open before');
    assert.equal(config.recovery_window, null);
    for (const target_time of ['latest', whole.recovery_window.to]) {
      const refused = await owner.api.post(`${pitrPath}/restore?dry_run=true`, {
        target_time,
        target_database: 'kept-copy',
      });
      const error = expectError(refused, 422, 'TARGET_TIME_INVALID');
      assert.match(error.message, /archive is broken/);
    }

    // The same bytes back: whole again, announced once more, the window as it was.
    for (const { key, body } of bodies) await bucket.put(key, body);
    await waitForState('healthy');
    await waitForEvent('archive.healthy', 2);
    const again = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.ok(again.recovery_window && again.recovery_window.to >= whole.recovery_window.to);
  });
});
