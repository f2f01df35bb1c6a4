import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ensureMetadataSchema } from '@pgcloud/postgres';
import { Isolation } from '@pgcloud/devstack';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { CreatePitr1763900000000 } from '../migrations/1763900000000-create-pitr.js';
import { ArchiveEntity } from './archive.entity.js';
import { ReceiverLeases } from './receiver-leases.repository.js';
import { ReceiverProgress } from './receiver-progress.repository.js';
import { SegmentEntity } from './segment.entity.js';

const ME = 'worker-me';
const OTHER = 'worker-other';
const LEASE_SECONDS = 10;

/** An archive row; `lease` in seconds from now (negative: ran out). */
interface Row {
  id: string;
  enabled?: boolean;
  owner?: string | null;
  lease?: number | null;
  /** Minutes since the pause for a restore began. */
  pausedMinutesAgo?: number;
  generation?: number;
}

describe('receiver leases and progress on pitr.archives', { timeout: 60_000 }, () => {
  const isolation = Isolation.create();
  const url = isolation.env['DATABASE_URL'] ?? '';
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    schema: 'pitr',
    entities: [ArchiveEntity, SegmentEntity],
    migrations: [CreatePitr1763900000000],
  });
  const leases = new ReceiverLeases(dataSource);
  const progress = new ReceiverProgress(dataSource);

  before(async () => {
    await ensureMetadataSchema(url, 'pitr');
    await dataSource.initialize();
    await dataSource.runMigrations();
  });
  after(async () => {
    await dataSource.destroy();
    await isolation.cleanup();
  });
  beforeEach(() => isolation.sql('DELETE FROM pitr.archives'));

  async function add(...rows: Row[]): Promise<void> {
    for (const row of rows)
      await isolation.sql(
        `INSERT INTO pitr.archives
                (database_id, project_id, owner_id, database_name, enabled, retention_days,
                 receiver_status, lease_owner, lease_expires_at, paused_for_restore, paused_at,
                 receiver_generation)
         VALUES ($1, 'prj_1', 'usr_1', $1, $2, 3, 'running', $3,
                 now() + make_interval(secs => $4), $5, now() - make_interval(mins => $6), $7)`,
        [
          row.id,
          row.enabled ?? true,
          row.owner ?? null,
          row.lease ?? null,
          row.pausedMinutesAgo !== undefined,
          row.pausedMinutesAgo ?? 0,
          row.generation ?? 0,
        ],
      );
  }

  async function owners(): Promise<Record<string, string | null>> {
    const rows = await isolation.sql<{ database_id: string; lease_owner: string | null }>(
      'SELECT database_id, lease_owner FROM pitr.archives ORDER BY database_id',
    );
    return Object.fromEntries(rows.map((r) => [r.database_id, r.lease_owner]));
  }

  it('claims receivers nobody holds or whose lease ran out, up to the limit, in order', async () => {
    await add(
      { id: 'db_a' },
      { id: 'db_b', owner: OTHER, lease: -1 },
      { id: 'db_c', owner: OTHER, lease: 5 },
      { id: 'db_d', enabled: false },
      { id: 'db_e', pausedMinutesAgo: 5 },
      { id: 'db_f', pausedMinutesAgo: 61 },
      { id: 'db_g' },
    );

    const claimed = await leases.claim(ME, LEASE_SECONDS, 3);

    assert.deepEqual(claimed, [
      { databaseId: 'db_a', previous: null },
      { databaseId: 'db_b', previous: OTHER },
      { databaseId: 'db_f', previous: null }, // a pause an hour old has lapsed
    ]);
    assert.deepEqual(await owners(), {
      db_a: ME,
      db_b: ME,
      db_c: OTHER,
      db_d: null,
      db_e: null,
      db_f: ME,
      db_g: null,
    });
    assert.deepEqual(
      (await leases.heldBy(ME)).map((l) => l.databaseId),
      ['db_a', 'db_b', 'db_f'],
    );
  });

  it('renews the leases of receivers that should run, skipping a row another transaction locked', async () => {
    await add(
      { id: 'db_a', owner: ME, lease: 1 },
      { id: 'db_b', owner: ME, lease: 1 },
      { id: 'db_off', owner: ME, lease: 1, enabled: false },
      { id: 'db_theirs', owner: OTHER, lease: 1 },
    );
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM pitr.archives WHERE database_id = 'db_b' FOR UPDATE`);
      await leases.renew(ME, LEASE_SECONDS);
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }

    const rows = await isolation.sql<{ database_id: string; renewed: boolean }>(
      `SELECT database_id, lease_expires_at > now() + interval '5 seconds' AS renewed
         FROM pitr.archives ORDER BY database_id`,
    );
    assert.deepEqual(
      rows.filter((r) => r.renewed).map((r) => r.database_id),
      ['db_a'],
    );
  });

  it('gives a lease back only once its receiver should stop, or all of them at shutdown', async () => {
    await add(
      { id: 'db_on', owner: ME, lease: 5 },
      { id: 'db_off', owner: ME, lease: 5, enabled: false },
      { id: 'db_paused', owner: ME, lease: 5, pausedMinutesAgo: 1 },
      { id: 'db_theirs', owner: OTHER, lease: 5, enabled: false },
    );
    for (const id of ['db_on', 'db_off', 'db_paused', 'db_theirs'])
      await leases.releaseStopped(id, ME);
    assert.deepEqual(await owners(), {
      db_off: null,
      db_on: ME,
      db_paused: null,
      db_theirs: OTHER,
    });

    await leases.releaseAll(ME);
    assert.deepEqual(await owners(), {
      db_off: null,
      db_on: null,
      db_paused: null,
      db_theirs: OTHER,
    });
  });

  it('tells a receiver whether its lease has the margin left, and whose the receiver is', async () => {
    await add(
      { id: 'db_long', owner: ME, lease: 8, generation: 4 },
      { id: 'db_short', owner: ME, lease: 1 },
      { id: 'db_theirs', owner: OTHER, lease: 8 },
    );

    assert.deepEqual(await leases.standing('db_long', ME, 2), { safe: true, generation: 4 });
    assert.deepEqual(await leases.standing('db_short', ME, 2), { safe: false, generation: 0 });
    assert.equal(await leases.standing('db_theirs', ME, 2), undefined);
    assert.equal(await leases.holds('db_long', ME), true);
    assert.equal(await leases.holds('db_theirs', ME), false);
    assert.equal(await leases.isHeld('db_theirs'), true);
    await isolation.sql(
      `UPDATE pitr.archives SET lease_expires_at = now() - interval '1 second'
        WHERE database_id = 'db_theirs'`,
    );
    assert.equal(await leases.isHeld('db_theirs'), false);
  });

  it('records a flush only under a live lease and the same generation; the window never moves back', async () => {
    await add({ id: 'db_a', owner: ME, lease: 8, generation: 2 });
    const flush = (windowTo: Date, bytesReceived: number, generation = 2) =>
      progress.recordFlush('db_a', ME, generation, {
        status: 'running',
        archivedLsn: 0x3000000n + BigInt(bytesReceived),
        lastWalFile: '000000010000000000000003.partial',
        windowTo,
        bytesReceived,
      });

    assert.equal(await flush(new Date('2026-11-22T10:00:05Z'), 100), true);
    assert.equal(await flush(new Date('2026-11-22T10:00:01Z'), 0), true);
    assert.equal(await flush(new Date('2026-11-22T10:00:09Z'), 50, 3), false, 'restarted');
    assert.equal(
      await progress.recordFlush('db_a', OTHER, 2, {
        status: 'running',
        archivedLsn: 1n,
        lastWalFile: null,
        windowTo: null,
        bytesReceived: 1,
      }),
      false,
      'not the holder',
    );

    const [row] = await isolation.sql<{
      window_to: Date;
      bytes_received: string;
      archived_lsn: string;
      latest: boolean;
    }>(
      `SELECT window_to, bytes_received, archived_lsn, latest_wal_time IS NOT NULL AS latest
         FROM pitr.archives WHERE database_id = 'db_a'`,
    );
    assert.equal(row?.window_to.toISOString(), '2026-11-22T10:00:05.000Z');
    assert.equal(row?.bytes_received, '100');
    assert.equal(row?.archived_lsn, String(0x3000000));
    assert.equal(row?.latest, true);
    assert.equal(await progress.generation('db_a'), 2);
    assert.equal(await progress.generation('db_gone'), undefined);
  });

  it('counts a failure and shows a status only on the holder’s current generation', async () => {
    await add({ id: 'db_a', owner: ME, lease: 8, generation: 2 });

    await progress.showStatus('db_a', ME, 'starting', 1);
    await progress.showStatus('db_a', OTHER, 'starting');
    await progress.recordFailure('db_a', OTHER);
    let [row] = await isolation.sql<{ receiver_status: string; receiver_errors: number }>(
      `SELECT receiver_status, receiver_errors FROM pitr.archives WHERE database_id = 'db_a'`,
    );
    assert.deepEqual(row, { receiver_status: 'running', receiver_errors: 0 });

    await progress.recordFailure('db_a', ME);
    [row] = await isolation.sql(
      `SELECT receiver_status, receiver_errors FROM pitr.archives WHERE database_id = 'db_a'`,
    );
    assert.deepEqual(row, { receiver_status: 'error', receiver_errors: 1 });
    await progress.showStatus('db_a', ME, 'starting', 2);
    [row] = await isolation.sql(
      `SELECT receiver_status, receiver_errors FROM pitr.archives WHERE database_id = 'db_a'`,
    );
    assert.equal(row?.receiver_status, 'starting');
  });
});
