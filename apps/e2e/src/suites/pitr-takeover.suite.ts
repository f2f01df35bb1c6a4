import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  ConnectionDetails,
  CreatedPitrRestore,
  Database,
  Project,
  Restore,
} from '@pgcloud/contracts';
import { fromMicros } from '@pgcloud/contracts';
import type { ObjectStore } from '@pgcloud/storage';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, signIn, eventually, eventuallyDefined } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { psql, runningDatabase } from '../support/databases.js';
import type { Marker } from '../support/markers.js';
import { MARKERS_TABLE_SQL, insertMarkers, markersIn, upTo } from '../support/markers.js';
import {
  allSegments,
  gapsIn,
  receiverStatus,
  receivewalOf,
  recoveryWindow,
  segmentStored,
  waitForArchive,
} from '../support/pitr.js';
import { waitForRestore } from '../support/restores.js';
import { ownStack } from '../support/shared-stack.js';

const LEASE_SECONDS = 3;
// About 24 MB of WAL: more than a segment completes while the writes go on.
const FILL_SQL =
  'INSERT INTO filler (note) SELECT repeat(md5(g::text), 30) FROM generate_series(1, 20000) g';

/**
 * Two pitr-worker replicas on a stack of their own: the one holding the receiver is
 * killed during writes and the other takes over with no gap; then both are down for a
 * while, and a restore to a moment of that outage is still exact.
 */
describe('PITR: a receiver moves to a live replica, and outages leave no gap', () => {
  let stack: Stack;
  let owner: SignedIn;
  let project: Project;
  let database: Database;
  let connection: ConnectionDetails;
  let bucket: ObjectStore;
  let pitrPath: string;
  const markers: Marker[] = [];

  const write = (sql: string) => psql(connection.connection_string, sql, 60_000);
  const holder = async (): Promise<string | undefined> => {
    const receiver = await receivewalOf(database.id);
    return ['pitr-worker', 'pitr-worker-2'].find((name) => stack.pidOf(name) === receiver?.parent);
  };

  before(async () => {
    stack = await ownStack({ PITR_LEASE_SECONDS: String(LEASE_SECONDS) });
    await stack.startApp('pitr-worker', { name: 'pitr-worker-2' });
    bucket = stack.bucket();
    owner = await signIn(new ApiClient(stack.baseUrl), 'takeover');
    project = expectData<Project>(await owner.api.post('/projects', { name: 'relay' }), 201);
    ({ database, connection } = await runningDatabase(owner.api, project.id, 'relay'));
    pitrPath = `/projects/${project.id}/databases/relay/pitr`;
    await write(`${MARKERS_TABLE_SQL}; CREATE TABLE filler (note text)`);
    expectData(await owner.api.post(`${pitrPath}/enable`, { retention_days: 1 }), 200);
    await waitForArchive(owner.api, pitrPath);
  });

  after(async () => {
    bucket?.close();
    await stack?.stop();
  });

  it('moves the receiver to the other replica when its holder is killed, with no gap', async () => {
    const first = await eventuallyDefined('a replica runs the receiver', holder);
    const other = first === 'pitr-worker' ? 'pitr-worker-2' : 'pitr-worker';
    markers.push(...(await insertMarkers(connection.connection_string, 1, 5)));
    await stack.stopApp(first, 'SIGKILL');
    await write(FILL_SQL);
    markers.push(...(await insertMarkers(connection.connection_string, 6, 10)));
    await eventuallyDefined('the other replica took the receiver over', async () =>
      (await holder()) === other ? true : undefined,
    );
    await write(FILL_SQL);
    markers.push(...(await insertMarkers(connection.connection_string, 11, 15)));
    const last = markers.at(-1)?.committed.micros ?? 0n;
    await eventuallyDefined('the window covers the writes', async () => {
      const window = await recoveryWindow(owner.api, pitrPath);
      return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
    });
    // The window is carried on by cycles that may have sampled the new receiver still
    // catching up (`starting`); it is reported running once it streams.
    await eventually(async () =>
      assert.equal((await receiverStatus(owner.api, pitrPath)).status, 'running'),
    );
    const { segments } = await allSegments(owner.api, pitrPath);
    assert.ok(segments.length >= 4, `${segments.length} segments`);
    assert.deepEqual(gapsIn(segments.map((s) => s.filename)), [], 'the archive has no gap');
    const objects = new Set(
      (await bucket.list(`projects/${project.id}/databases/${database.id}/wal/`)).map((o) =>
        o.key.slice(o.key.lastIndexOf('/') + 1),
      ),
    );
    for (const segment of segments)
      assert.ok(segmentStored(segment.filename, objects), segment.filename);
    await stack.startApp('pitr-worker', { name: first });
  });

  it('restores exactly to a moment when no pitr-worker ran', async () => {
    await stack.stopApp('pitr-worker', 'SIGKILL');
    await stack.stopApp('pitr-worker-2', 'SIGKILL');
    const during = await insertMarkers(connection.connection_string, 16, 25);
    await write(FILL_SQL);
    markers.push(...during, ...(await insertMarkers(connection.connection_string, 26, 28)));
    await stack.startApp('pitr-worker');
    const last = markers.at(-1)?.committed.micros ?? 0n;
    await eventuallyDefined(
      'the window covers the outage',
      async () => {
        const window = await recoveryWindow(owner.api, pitrPath);
        return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
      },
      { timeoutMs: 90_000 },
    );
    const k = 20;
    const [at, next] = [markers[k - 1], markers[k]];
    assert.ok(at && next && at.k === k);
    const target = fromMicros((at.committed.micros + next.committed.micros) / 2n).iso;
    const created = expectData<CreatedPitrRestore>(
      await owner.api.post(`${pitrPath}/restore`, {
        target_time: target,
        target_database: 'relay-copy',
      }),
      201,
    );
    const restore: Restore = await waitForRestore(
      owner.api,
      `/projects/${project.id}/databases/relay`,
      created.restore_id,
    );
    assert.equal(restore.status, 'completed', restore.error);
    const copy = expectData<ConnectionDetails>(
      await owner.api.get(`/projects/${project.id}/databases/relay-copy/url`),
      200,
    );
    assert.deepEqual(await markersIn(copy.connection_string), upTo(k));
    const { segments } = await allSegments(owner.api, pitrPath);
    assert.deepEqual(gapsIn(segments.map((s) => s.filename)), [], 'no gap across the outage');
  });
});
