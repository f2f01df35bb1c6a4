import assert from 'node:assert/strict';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import type {
  Backup,
  ConnectionDetails,
  Database,
  EnabledPitr,
  PitrConfig,
  Project,
  RestorePoint,
  WalReceiverStatus,
} from '@pgcloud/contracts';
import { zstdDecompress } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { SignedIn } from '@pgcloud/testing';
import { signIn, eventually, eventuallyDefined } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { psql, runningDatabase } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import {
  allSegments,
  receiverStatus,
  receivewalOf,
  recoveryWindow,
  segmentStored,
  waitForArchive,
} from '../support/pitr.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

const ROUTES_NEEDING_PITR: [method: 'get' | 'post', suffix: string][] = [
  ['get', '/wal'],
  ['get', '/recovery-window'],
  ['get', '/receiver-status'],
  ['post', '/restart-receiver'],
];
// About 24 MB of WAL: more than one 16 MiB segment.
const FILL_SQL = `INSERT INTO ledger (note) SELECT repeat(md5(g::text), 30) FROM generate_series(1, 20000) g`;

describe('PITR, part 1: the receiver, the archive and the recovery window', () => {
  let owner: SignedIn;
  let project: Project;
  let database: Database;
  let connection: ConnectionDetails;
  let pitrPath: string;
  let bucket: ObjectStore;

  const write = (sql: string) => psql(connection.connection_string, sql, 60_000);

  before(async () => {
    const stack = await sharedStack();
    bucket = stack.bucket();
    owner = await signIn(await newClient(), uniqueLogin('archivist'));
    project = expectData<Project>(await owner.api.post('/projects', { name: 'archived' }), 201);
    ({ database, connection } = await runningDatabase(owner.api, project.id, 'ledger'));
    pitrPath = `/projects/${project.id}/databases/ledger/pitr`;
    await write('CREATE TABLE ledger (id bigserial PRIMARY KEY, note text NOT NULL)');
  });

  after(() => bucket?.close());

  it('answers PITR_NOT_ENABLED, and a config of nulls, before PITR is on', async () => {
    const config = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.deepEqual(config, {
      enabled: false,
      base_backup_id: null,
      retention_days: null,
      recovery_window: null,
    });
    for (const [method, suffix] of ROUTES_NEEDING_PITR)
      expectError(await owner.api[method](`${pitrPath}${suffix}`), 409, 'PITR_NOT_ENABLED');
  });

  it('refuses retention_days out of range (400) and above the Free tier (403)', async () => {
    for (const body of [
      {},
      { retention_days: 0 },
      { retention_days: 36 },
      { retention_days: 2.5 },
      { retention_days: '7' },
    ])
      expectError(await owner.api.post(`${pitrPath}/enable`, body), 400, 'VALIDATION_ERROR');
    expectError(
      await owner.api.post(`${pitrPath}/enable`, { retention_days: 8 }),
      403,
      'QUOTA_EXCEEDED',
    );
    expectError(
      await owner.api.post(`/projects/${project.id}/databases/nowhere/pitr/enable`, {
        retention_days: 3,
      }),
      404,
      'DATABASE_NOT_FOUND',
    );
    const config = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.equal(config.enabled, false, 'nothing was half enabled');
  });

  it('enables: a base backup and a receiver starting; enabling again changes only retention_days', async () => {
    const enabled = expectData<EnabledPitr>(
      await owner.api.post(`${pitrPath}/enable`, { retention_days: 7 }),
      200,
    );
    assert.equal(enabled.enabled, true);
    assert.match(enabled.base_backup_id, /^bkp_[0-9a-z]{20}$/);
    assert.equal(enabled.wal_receiver_status, 'starting');
    const again = expectData<EnabledPitr>(
      await owner.api.post(`${pitrPath}/enable`, { retention_days: 3 }),
      200,
    );
    assert.equal(again.base_backup_id, enabled.base_backup_id, 'no second base backup');
    const config = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.equal(config.retention_days, 3);
    assert.equal(config.base_backup_id, enabled.base_backup_id);
    const { backups } = expectData<{ backups: Backup[] }>(
      await owner.api.get(`/projects/${project.id}/databases/ledger/backups`),
      200,
    );
    const base = backups.find((b) => b.id === enabled.base_backup_id);
    assert.equal(base?.type, 'automated', 'the base backup is listed with the others');
  });

  it('archives written WAL: segments whose sizes add up and match the objects in S3', async () => {
    await waitForArchive(owner.api, pitrPath);
    await write(FILL_SQL);
    // The receiver goes on archiving the fill's segments, each a moment after the one before:
    // the listing looked at is one with two segments at least, read while no further segment
    // was recorded (a page read after it counts as many).
    const { segments, totalCount, totalSize, page } = await eventually(async () => {
      const all = await allSegments(owner.api, pitrPath);
      assert.ok(all.segments.length >= 2, `two segments archived, not ${all.segments.length}`);
      const page = expectData<{
        archives: unknown[];
        next_cursor: string | null;
        total_count: number;
      }>(await owner.api.get(`${pitrPath}/wal?limit=1`), 200);
      assert.equal(page.total_count, all.totalCount, 'no segment was archived meanwhile');
      return { ...all, page };
    });
    assert.equal(totalCount, segments.length);
    assert.equal(
      totalSize,
      segments.reduce((sum, s) => sum + s.size_bytes, 0),
    );
    // Listed after the segments: an object is stored before its segment is recorded.
    const objects = new Map(
      (await bucket.list(`projects/${project.id}/databases/${database.id}/wal/`)).map((o) => [
        o.key.slice(o.key.lastIndexOf('/') + 1),
        o.size,
      ]),
    );
    for (const segment of segments) {
      assert.equal(segment.size_bytes, 16 * 1024 * 1024);
      // Compressed under `<segment>.zst` (the WAL repeats itself: fewer bytes), or pieces
      // named `<segment>.<start>-<end>` that cover it, each of its own length.
      const compressed = objects.get(`${segment.filename}.zst`);
      if (compressed !== undefined) assert.ok(compressed < segment.size_bytes, segment.filename);
      else
        for (const [name, size] of objects) {
          const piece = new RegExp(`^${segment.filename}\\.([0-9a-f]{8})-([0-9a-f]{8})$`).exec(
            name,
          );
          if (piece)
            assert.equal(size, parseInt(piece[2] ?? '', 16) - parseInt(piece[1] ?? '', 16));
        }
      assert.ok(segmentStored(segment.filename, new Set(objects.keys())), segment.filename);
      assert.ok(Date.parse(segment.archived_at) > 0);
    }
    // A compressed segment is the WAL: zstd gives back a whole segment, named in its header.
    const first = segments[0]?.filename ?? '';
    const prefix = `projects/${project.id}/databases/${database.id}/wal/`;
    const key = (await bucket.list(prefix)).find((o) => o.key.endsWith(`/${first}.zst`))?.key;
    assert.ok(key, `${first} is stored compressed`);
    const wal = await zstdDecompress(await buffer(await bucket.getStream(key)), 16 << 20);
    assert.equal(wal.length, 16 * 1024 * 1024);
    // The long header of a segment's first page: its magic, then its timeline.
    assert.equal(wal.readUInt32LE(4), parseInt(first.slice(0, 8), 16));
    assert.equal(page.archives.length, 1);
    assert.equal(page.next_cursor, segments[0]?.filename);
    for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'cursor=not-a-cursor'])
      expectError(await owner.api.get(`${pitrPath}/wal?${query}`), 400, 'VALIDATION_ERROR');
  });

  it('keeps `to` within seconds of now, advancing while the database is idle', async () => {
    // Right after the fill the receiver may still be uploading it; then `to` keeps up.
    const first = await eventually(async () => {
      const window = await recoveryWindow(owner.api, pitrPath);
      assert.ok(window.from && window.to && window.base_backup_time && window.latest_wal_time);
      assert.ok(Date.now() - Date.parse(window.to) < 5000, `to ${window.to} trails now by seconds`);
      return window;
    });
    const firstTo = Date.parse(first.to ?? '');
    assert.ok(Date.parse(first.from ?? '') <= firstTo);
    // Nothing is written from here on: `to` moves on with the primary's clock all the same.
    const later = await eventually(
      async () => {
        const window = await recoveryWindow(owner.api, pitrPath);
        assert.ok(
          Date.parse(window.to ?? '') - firstTo >= 2000,
          `to moved on while idle: ${first.to} -> ${window.to}`,
        );
        return window;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(later.from, first.from);
    const status = await eventually(async () => {
      const status = await receiverStatus(owner.api, pitrPath);
      assert.equal(status.status, 'running');
      assert.ok(status.lag_seconds <= 4, `lag ${status.lag_seconds}`);
      return status;
    });
    assert.ok(status.bytes_received > 16 * 1024 * 1024);
    assert.match(status.last_wal_file ?? '', /^[0-9A-F]{24}(\.partial)?$/);
    const config = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.equal(config.recovery_window?.from, later.from);
  });

  it('stops `to` while the receiver is stopped during writes, and catches up after', async () => {
    const receiver = await receivewalOf(database.id);
    assert.ok(receiver, 'pg_receivewal runs');
    process.kill(receiver.pid, 'SIGSTOP');
    try {
      // Until this commit `to` may still move on (the database was idle, all of its WAL
      // archived); from it on, the archive lacks WAL, and `to` must never pass it.
      await write(`INSERT INTO ledger (note) VALUES ('while stopped 0')`);
      const wrote = Date.now();
      for (let i = 1; i < 6; i++) {
        await sleep(500);
        await write(`INSERT INTO ledger (note) VALUES ('while stopped ${i}')`);
      }
      await sleep(500);
      const during = await recoveryWindow(owner.api, pitrPath);
      assert.ok(
        Date.parse(during.to ?? '') <= wrote,
        `to stays before a commit the archive lacks: ${during.to} > ${new Date(wrote).toISOString()}`,
      );
      const status = await receiverStatus(owner.api, pitrPath);
      assert.ok(status.lag_seconds >= 3, `lag grows: ${status.lag_seconds}`);
    } finally {
      process.kill(receiver.pid, 'SIGCONT');
    }
    await eventuallyDefined('to catches up', async () => {
      const window = await recoveryWindow(owner.api, pitrPath);
      return Date.now() - Date.parse(window.to ?? '') < 4000 ? window : undefined;
    });
  });

  it('restarts pg_receivewal by itself after kill -9, counting the error', async () => {
    const before = await receiverStatus(owner.api, pitrPath);
    const receiver = await receivewalOf(database.id);
    assert.ok(receiver);
    process.kill(receiver.pid, 'SIGKILL');
    const failed = await eventuallyDefined('the failure shows', async () => {
      const status = await receiverStatus(owner.api, pitrPath);
      return status.errors > before.errors ? status : undefined;
    });
    // In error, or starting again after its backoff; a look that comes late may find it
    // streaming already, which only a new pg_receivewal can be.
    if (failed.status === 'running') {
      const now = await receivewalOf(database.id);
      assert.ok(now && now.pid !== receiver.pid, 'running again only with a new pg_receivewal');
    } else assert.ok(['error', 'starting'].includes(failed.status), failed.status);
    assert.equal(failed.started_at, before.started_at, 'the same receiver, restarted');
    const back = await eventuallyDefined('streaming again', async () => {
      const status = await receiverStatus(owner.api, pitrPath);
      const pid = (await receivewalOf(database.id))?.pid;
      return status.status === 'running' && pid !== undefined && pid !== receiver.pid
        ? status
        : undefined;
    });
    assert.ok(back.errors >= 1);
    await write(`INSERT INTO ledger (note) VALUES ('after the restart')`);
    await eventuallyDefined('to moves on', async () => {
      const window = await recoveryWindow(owner.api, pitrPath);
      return Date.now() - Date.parse(window.to ?? '') < 4000 ? window : undefined;
    });
  });

  it('restart-receiver starts a new receiver: a new started_at, errors 0', async () => {
    const before = await receiverStatus(owner.api, pitrPath);
    const old = await receivewalOf(database.id);
    await sleep(10);
    const restarted = expectData<WalReceiverStatus>(
      await owner.api.post(`${pitrPath}/restart-receiver`),
      200,
    );
    assert.ok(Date.parse(restarted.started_at) > Date.parse(before.started_at));
    assert.equal(restarted.errors, 0);
    assert.equal(restarted.status, 'starting');
    await eventuallyDefined('the new receiver streams', async () => {
      const status = await receiverStatus(owner.api, pitrPath);
      const pid = (await receivewalOf(database.id))?.pid;
      return status.status === 'running' && pid !== old?.pid ? status : undefined;
    });
  });

  it('restart-receiver cuts the backoff after repeated failures short', async () => {
    // Five failures in a row: after the fifth the receiver waits 16 s before it starts
    // pg_receivewal again, so nothing streams before 16 s after the last kill without the cut.
    const backoffMs = 16_000;
    let killed = 0;
    for (let failure = 1; failure <= 5; failure++) {
      const receiver = await eventuallyDefined('pg_receivewal runs', () =>
        receivewalOf(database.id),
      );
      const before = await receiverStatus(owner.api, pitrPath);
      killed = Date.now();
      process.kill(receiver.pid, 'SIGKILL');
      await eventuallyDefined('the failure shows', async () => {
        const status = await receiverStatus(owner.api, pitrPath);
        return status.errors > before.errors ? status : undefined;
      });
    }
    expectData<WalReceiverStatus>(await owner.api.post(`${pitrPath}/restart-receiver`), 200);
    const back = await eventuallyDefined(
      'the restarted receiver streams',
      async () => {
        const status = await receiverStatus(owner.api, pitrPath);
        return status.status === 'running' && (await receivewalOf(database.id))
          ? status
          : undefined;
      },
      { timeoutMs: Math.max(0, killed + backoffMs - Date.now()) },
    );
    assert.equal(back.errors, 0);
    assert.ok(Date.now() - killed < backoffMs, 'streaming before the 16 s backoff ran out');
  });

  it('keeps at most 20 restore points in a Free archive: the 21st is QUOTA_EXCEEDED', async () => {
    const points = async () =>
      expectData<{ restore_points: RestorePoint[] }>(
        await owner.api.get(`${pitrPath}/restore-points`),
        200,
      ).restore_points;
    for (let n = (await points()).length; n < 20; n++)
      expectData(await owner.api.post(`${pitrPath}/restore-points`, { name: `cap-${n}` }), 201);
    const refused = expectError(
      await owner.api.post(`${pitrPath}/restore-points`, { name: 'one-too-many' }),
      403,
      'QUOTA_EXCEEDED',
    );
    assert.match(refused.message, /20 restore points per archive/);
    const kept = await points();
    assert.equal(kept.length, 20);
    assert.ok(!kept.some((p) => p.name === 'one-too-many'), 'the refused point is not recorded');
  });

  it('disables: receiver stopped, slot dropped, PITR routes answer PITR_NOT_ENABLED', async () => {
    const disabled = expectData<{ enabled: boolean; wal_receiver_status: string }>(
      await owner.api.post(`${pitrPath}/disable`),
      200,
    );
    assert.deepEqual(disabled, { enabled: false, wal_receiver_status: 'stopped' });
    await eventuallyDefined('pg_receivewal is gone', async () =>
      (await receivewalOf(database.id)) === undefined ? true : undefined,
    );
    assert.equal(
      await psql(connection.connection_string, 'SELECT count(*) FROM pg_replication_slots'),
      '0',
    );
    for (const [method, suffix] of ROUTES_NEEDING_PITR)
      expectError(await owner.api[method](`${pitrPath}${suffix}`), 409, 'PITR_NOT_ENABLED');
    const config = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.equal(config.enabled, false);
    assert.equal(config.recovery_window, null);
    expectData(await owner.api.post(`${pitrPath}/disable`), 200);
  });

  it('refuses to enable again within the cooldown: 409 COOLDOWN_ACTIVE with Retry-After', async () => {
    const refused = await owner.api.post(`${pitrPath}/enable`, { retention_days: 1 });
    expectError(refused, 409, 'COOLDOWN_ACTIVE');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter > 500 && retryAfter <= 600,
      `Retry-After ${refused.headers.get('retry-after')}`,
    );
    const config = expectData<PitrConfig>(await owner.api.get(`${pitrPath}/config`), 200);
    assert.equal(config.enabled, false, 'nothing was started');
    assert.equal(await receivewalOf(database.id), undefined);
  });

  it('deletes the WAL objects with the database', async () => {
    const { database: doomed } = await runningDatabase(owner.api, project.id, 'doomed');
    const doomedPitr = `/projects/${project.id}/databases/doomed/pitr`;
    expectData(await owner.api.post(`${doomedPitr}/enable`, { retention_days: 1 }), 200);
    await waitForArchive(owner.api, doomedPitr);
    const prefix = `projects/${project.id}/databases/${doomed.id}/wal/`;
    await eventuallyDefined('WAL in S3', async () =>
      (await bucket.list(prefix)).length > 0 ? true : undefined,
    );
    expectData(await owner.api.delete(`/projects/${project.id}/databases/doomed`), 200);
    await eventuallyDefined('the WAL objects are gone', async () =>
      (await bucket.list(prefix)).length === 0 && (await receivewalOf(doomed.id)) === undefined
        ? true
        : undefined,
    );
  });
});
