import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureMetadataSchema } from '@pgcloud/postgres';
import { Isolation } from '@pgcloud/devstack';
import { DataSource } from 'typeorm';
import { CreatePitr1763900000000 } from '../migrations/1763900000000-create-pitr.js';
import { SegmentPieces1764900000000 } from '../migrations/1764900000000-segment-pieces.js';
import { ArchiveHealth1765000000000 } from '../migrations/1765000000000-archive-health.js';
import { ArchiveIntact1765100000000 } from '../migrations/1765100000000-archive-intact.js';
import { CompressedSegments1765200000000 } from '../migrations/1765200000000-compressed-segments.js';
import { ArchiveEntity } from './archive.entity.js';
import type { ArchiveEnabling } from './archive.repository.js';
import { ArchiveRepository } from './archive.repository.js';
import { SegmentEntity } from './segment.entity.js';
import { SegmentRepository } from './segment.repository.js';

const HOUR_MS = 3_600_000;

describe('archive and segment records on the real PostgreSQL', { timeout: 60_000 }, () => {
  const isolation = Isolation.create();
  const url = isolation.env['DATABASE_URL'] ?? '';
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    schema: 'pitr',
    entities: [ArchiveEntity, SegmentEntity],
    migrations: [
      CreatePitr1763900000000,
      SegmentPieces1764900000000,
      ArchiveHealth1765000000000,
      ArchiveIntact1765100000000,
      CompressedSegments1765200000000,
    ],
  });
  const archives = new ArchiveRepository(dataSource);
  const segments = new SegmentRepository(dataSource);
  const enabling = (databaseId: string, retentionDays = 3): ArchiveEnabling => ({
    databaseId,
    projectId: 'prj_1',
    ownerId: 'usr_1',
    databaseName: databaseId,
    retentionDays,
  });

  before(async () => {
    await ensureMetadataSchema(url, 'pitr');
    await dataSource.initialize();
    await dataSource.runMigrations();
  });
  after(async () => {
    await dataSource.destroy();
    await isolation.cleanup();
  });

  it('enables once; enabling after a disable begins a new archive and a new receiver', async () => {
    assert.equal(await archives.enable(enabling('db_a')), true);
    assert.equal(await archives.enable(enabling('db_a', 5)), false, 'enabled already');
    await isolation.sql(
      `UPDATE pitr.archives SET start_lsn = 50331648, timeline = 1, archived_lsn = 50331700,
              window_to = now(), receiver_errors = 4 WHERE database_id = 'db_a'`,
    );
    assert.equal(await archives.disable('db_a'), true);
    assert.equal(await archives.disable('db_a'), false);

    assert.equal(await archives.enable(enabling('db_a', 7)), true);

    const row = await archives.get('db_a');
    assert.equal(row.enabled, true);
    assert.equal(row.retentionDays, 7);
    assert.equal(row.receiverGeneration, 1);
    assert.equal(row.startLsn, null);
    assert.equal(row.archivedLsn, null);
    assert.equal(row.windowTo, null);
    assert.equal(row.receiverErrors, 0);
    assert.equal(row.slotToDrop, false);
  });

  it('abandons only a start that never began', async () => {
    await archives.enable(enabling('db_begun'));
    await isolation.sql(`UPDATE pitr.archives SET start_lsn = 1 WHERE database_id = 'db_begun'`);
    await archives.enable(enabling('db_new'));

    await archives.abandonStart('db_begun');
    await archives.abandonStart('db_new');

    assert.equal((await archives.get('db_begun')).enabled, true);
    const abandoned = await archives.get('db_new');
    assert.equal(abandoned.enabled, false);
    assert.equal(abandoned.slotToDrop, true);
  });

  it('keeps the older of two holds in force, and the later end', async () => {
    await archives.enable(enabling('db_hold'));
    const older = new Date(Date.now() - 48 * HOUR_MS);
    const newer = new Date(Date.now() - 24 * HOUR_MS);

    await archives.holdForRestore('db_hold', newer, new Date(Date.now() + 2 * HOUR_MS));
    await archives.holdForRestore('db_hold', older, new Date(Date.now() + HOUR_MS));
    await archives.holdForRestore('db_hold', newer, new Date(Date.now() + HOUR_MS));
    let row = await archives.get('db_hold');
    assert.equal(row.holdFrom?.getTime(), older.getTime());
    assert.ok((row.holdUntil?.getTime() ?? 0) > Date.now() + 1.5 * HOUR_MS);

    // A lapsed hold is replaced, not kept.
    await isolation.sql(
      `UPDATE pitr.archives SET hold_until = now() - interval '1 second'
        WHERE database_id = 'db_hold'`,
    );
    await archives.holdForRestore('db_hold', newer, new Date(Date.now() + HOUR_MS));
    row = await archives.get('db_hold');
    assert.equal(row.holdFrom?.getTime(), newer.getTime());
  });

  it('resumes after a restore only what was paused, starting only an enabled receiver', async () => {
    await archives.enable(enabling('db_on'));
    await archives.enable(enabling('db_off'));
    await archives.pauseForRestore('db_on');
    await archives.pauseForRestore('db_off');
    await archives.disable('db_off');

    await archives.resumeAfterRestore('db_on');
    await archives.resumeAfterRestore('db_off');
    await archives.resumeAfterRestore('db_on'); // twice: changes nothing more

    const on = await archives.get('db_on');
    assert.deepEqual([on.pausedForRestore, on.receiverStatus], [false, 'starting']);
    const off = await archives.get('db_off');
    assert.deepEqual([off.pausedForRestore, off.receiverStatus], [false, 'stopped']);
  });

  it('finds the segments retention no longer needs, and pages the current ones', async () => {
    const name = (timeline: number, segno: bigint) =>
      `${String(timeline).padStart(8, '0')}000000000000000${segno.toString(16).toUpperCase()}`;
    const add = (
      timeline: number,
      segno: bigint,
      stored?: { pieceEnds?: number[]; zstdBytes?: number },
    ) =>
      segments.record({
        databaseId: 'db_seg',
        name: name(timeline, segno),
        timeline,
        segno,
        objectKey: `wal/${timeline}/${segno}`,
        sizeBytes: 10,
        ...stored,
      });
    for (const segno of [3n, 4n]) await add(2, segno);
    await add(2, 5n, { zstdBytes: 7 }); // stored compressed
    await add(2, 6n, { pieceEnds: [4, 10] }); // stored as the pieces it was uploaded in
    await add(1, 9n);
    await add(2, 3n); // recorded again by a retry: still one row

    const old = await segments.beforeRetention('db_seg', 2, 5n, 500);
    assert.deepEqual(
      old.map((s) => [s.timeline, s.segno]),
      [
        [1, 9n],
        [2, 3n],
        [2, 4n],
      ],
    );
    const page = await segments.page(
      { databaseId: 'db_seg', timeline: 2, firstSegno: 4n },
      undefined,
      2,
    );
    assert.deepEqual(
      page.segments.map((s) => s.segno),
      [4n, 5n, 6n],
      'one more than asked',
    );
    assert.deepEqual([page.count, page.sizeBytes], [3, 30]);
    const next = await segments.page(
      { databaseId: 'db_seg', timeline: 2, firstSegno: 4n },
      page.segments[1]?.name,
      2,
    );
    assert.deepEqual(
      next.segments.map((s) => s.segno),
      [6n],
    );

    const named = await segments.named('db_seg', [name(2, 6n), name(2, 5n), name(2, 7n)]);
    assert.deepEqual(named.map((s) => [s.segno, s.pieceEnds, s.zstdBytes]).sort(), [
      [5n, null, 7],
      [6n, [4, 10], null],
    ]);

    await segments.deleteEach(old);
    assert.deepEqual(
      (await segments.onTimeline('db_seg', 2)).map((s) => s.segno),
      [5n, 6n],
    );
    await archives.transaction((manager) => segments.deleteAll('db_seg', manager));
    assert.equal((await segments.onTimeline('db_seg', 2)).length, 0);
  });
});
