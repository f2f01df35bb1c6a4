import { BACKUP_PATTERNS } from '@pgcloud/contracts';
import { answer, fakeRpcClient } from '@pgcloud/testing';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import type { ArchiveBackup } from '@pgcloud/contracts';
import { WAL_SEGMENT_BYTES, formatLsn, segmentName, segmentStart } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { EntityManager } from 'typeorm';
import { ArchiveEntity } from '../archive/archive.entity.js';
import type { ArchiveRepository } from '../archive/archive.repository.js';
import type { PitrService } from '../archive/pitr.service.js';
import { SegmentEntity } from '../archive/segment.entity.js';
import type { SegmentRepository } from '../archive/segment.repository.js';
import { pieceKey, pieceKeys, segmentKey, walPrefix } from '../archive/wal-keys.js';
import type { PitrWorkerConfig } from '../config.js';
import { RetentionSweep } from './retention-sweep.js';
import type { SweepLock } from './sweep-lock.repository.js';

const DAY_MS = 86_400_000;
const PROJECT = 'prj_1';
const ago = (days: number) => new Date(Date.now() - days * DAY_MS);

function archiveRow(databaseId: string, more: Partial<ArchiveEntity> = {}): ArchiveEntity {
  return Object.assign(new ArchiveEntity(), {
    databaseId,
    projectId: PROJECT,
    ownerId: 'usr_1',
    enabled: true,
    retentionDays: 2,
    timeline: 2,
    startLsn: segmentStart(3n),
    archivedLsn: segmentStart(13n) + 100n,
    enabledAt: ago(6),
    disabledAt: null,
    slotToDrop: false,
    holdFrom: null,
    holdUntil: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    ...more,
  });
}

/** A completed base backup of timeline 2 that starts in segment `segno`. */
function base(id: string, segno: bigint, completedAt: Date): ArchiveBackup {
  return {
    id,
    status: 'completed',
    start_lsn: formatLsn(segmentStart(segno) + 0x28n),
    end_lsn: formatLsn(segmentStart(segno + 1n)),
    timeline: 2,
    created_at: completedAt.toISOString(),
    completed_at: completedAt.toISOString(),
    size_bytes: 4096,
  };
}

/** pitr's tables, S3 and backup-service in memory; `events` tells what happened in which order. */
class World {
  archives = new Map<string, ArchiveEntity>();
  segments: SegmentEntity[] = [];
  objects = new Set<string>();
  /** Objects put a moment ago (the rest were put long before). */
  fresh = new Set<string>();
  backups = new Map<string, ArchiveBackup[]>();
  events: string[] = [];
  lockFree = true;
  droppedSlots: string[] = [];
  afterListing: () => void = () => undefined;

  /** A recorded segment and its objects: one, or the pieces ending at `pieceEnds`. */
  addSegment(databaseId: string, timeline: number, segno: bigint, pieceEnds?: number[]): void {
    const name = segmentName(timeline, segno);
    const objectKey = segmentKey(PROJECT, databaseId, timeline, name);
    this.segments.push(
      Object.assign(new SegmentEntity(), {
        databaseId,
        name,
        timeline,
        segno,
        objectKey,
        pieceEnds: pieceEnds ?? null,
      }),
    );
    for (const key of pieceEnds ? pieceKeys(objectKey, pieceEnds) : [objectKey])
      this.objects.add(key);
  }

  segmentNames(databaseId: string): string[] {
    return this.segments.filter((s) => s.databaseId === databaseId).map((s) => s.name);
  }

  sweep(): RetentionSweep {
    const lock = {
      whileHeld: async (work: () => Promise<void>) => {
        if (this.lockFree) await work();
      },
    };
    const archives = {
      all: () => {
        const listed = [...this.archives.values()].map((a) => ({ ...a }));
        this.afterListing();
        return Promise.resolve(listed);
      },
      findEnabled: (id: string) =>
        Promise.resolve(this.archives.get(id)?.enabled ? this.archives.get(id) : null),
      setKeepFrom: (id: string, keepFrom: Date) => {
        this.events.push(`keep ${id} from ${keepFrom.toISOString()}`);
        return Promise.resolve();
      },
      transaction: (work: (manager: EntityManager) => Promise<unknown>) =>
        work({} as EntityManager),
      lockDisabled: (id: string) =>
        Promise.resolve(this.archives.get(id)?.enabled === false ? this.archives.get(id) : null),
      delete: (id: string) => {
        this.events.push(`delete archive ${id}`);
        this.archives.delete(id);
        return Promise.resolve();
      },
    };
    const segments = {
      beforeRetention: (id: string, timeline: number, keep: bigint, limit: number) =>
        Promise.resolve(
          this.segments
            .filter((s) => s.databaseId === id && (s.timeline !== timeline || s.segno < keep))
            .sort((a, b) => a.name.localeCompare(b.name))
            .slice(0, limit),
        ),
      named: (id: string, names: string[]) =>
        Promise.resolve(this.segments.filter((s) => s.databaseId === id && names.includes(s.name))),
      deleteEach: (gone: SegmentEntity[]) => {
        this.events.push(`delete ${gone.length} segment record(s)`);
        this.segments = this.segments.filter((s) => !gone.includes(s));
        return Promise.resolve();
      },
      deleteAll: (id: string) => {
        this.events.push(`delete segment records of ${id}`);
        this.segments = this.segments.filter((s) => s.databaseId !== id);
        return Promise.resolve();
      },
    };
    const store = {
      list: (prefix: string) =>
        Promise.resolve(
          [...this.objects]
            .filter((k) => k.startsWith(prefix))
            .map((key) => ({
              key,
              size: 1,
              lastModified: this.fresh.has(key) ? new Date() : ago(1),
            })),
        ),
      deleteKeys: (keys: string[]) => {
        this.events.push(`delete ${keys.length} object(s)`);
        for (const key of keys) this.objects.delete(key);
        return Promise.resolve(keys.length);
      },
      deletePrefix: (prefix: string) => {
        const keys = [...this.objects].filter((k) => k.startsWith(prefix));
        this.events.push(`delete ${keys.length} object(s)`);
        for (const key of keys) this.objects.delete(key);
        return Promise.resolve(keys.length);
      },
    };
    const rpc = fakeRpcClient(
      answer(BACKUP_PATTERNS.forArchive, ({ database_id }) => {
        const found = this.backups.get(database_id);
        return found
          ? Promise.resolve({ backups: found })
          : Promise.reject(new Error('backups: timed out'));
      }),
    );
    // Retention as pitr defines it: now - retention_days.
    const pitr = {
      retentionCutoff: (archive: ArchiveEntity) => ago(archive.retentionDays),
      dropSlot: (_ctx: unknown, id: string) => {
        this.droppedSlots.push(id);
        return Promise.resolve();
      },
    };
    const config = { PITR_RETENTION_DAY_SECONDS: 86_400 } as PitrWorkerConfig;
    return new RetentionSweep(
      rpc,
      lock as unknown as SweepLock,
      archives as unknown as ArchiveRepository,
      segments as unknown as SegmentRepository,
      pitr as unknown as PitrService,
      store as unknown as ObjectStore,
      config,
    );
  }
}

/** An archive of timeline 2 begun in segment 3, with backups 5, 3 and 1 days old. */
function enabledArchive(world: World, id: string, more: Partial<ArchiveEntity> = {}) {
  world.archives.set(id, archiveRow(id, more));
  const backups = [
    base('bkp_5d', 3n, ago(5)),
    base('bkp_3d', 8n, ago(3)),
    base('bkp_1d', 11n, ago(1)),
  ];
  world.backups.set(id, backups);
  world.addSegment(id, 1, 20n); // left by an earlier archive, on another timeline
  for (let segno = 3n; segno <= 12n; segno++) world.addSegment(id, 2, segno);
  return backups;
}

describe('RetentionSweep', () => {
  before(() => {
    Logger.overrideLogger(false);
  });

  it('deletes the WAL before the base backup the window starts from: objects first, records after', async () => {
    const world = new World();
    const [, threeDaysOld] = enabledArchive(world, 'db_1');

    await world.sweep().sweep();

    // Two days of retention: the window starts from the 3-day-old backup, begun in segment 8.
    assert.deepEqual(
      world.segmentNames('db_1'),
      [8n, 9n, 10n, 11n, 12n].map((segno) => segmentName(2, segno)),
    );
    assert.deepEqual(world.events, [
      `keep db_1 from ${threeDaysOld?.completed_at}`,
      'delete 6 object(s)',
      'delete 6 segment record(s)',
    ]);
    assert.ok(!world.objects.has(segmentKey(PROJECT, 'db_1', 1, segmentName(1, 20n))));
    assert.ok(world.objects.has(segmentKey(PROJECT, 'db_1', 2, segmentName(2, 8n))));
  });

  it('keeps the base backup and WAL a pending restore holds, until the hold ends', async () => {
    const world = new World();
    // A restore to 4.5 days ago replays from the 5-day-old backup.
    const [fiveDaysOld] = enabledArchive(world, 'db_held', {
      holdFrom: ago(4.5),
      holdUntil: new Date(Date.now() + 3_600_000),
    });
    enabledArchive(world, 'db_hold_over', { holdFrom: ago(4.5), holdUntil: ago(0.01) });

    await world.sweep().sweep();

    assert.equal(world.segmentNames('db_held').length, 10, 'only the other timeline went');
    assert.equal(world.segmentNames('db_hold_over').length, 5);
    assert.ok(world.events.includes(`keep db_held from ${fiveDaysOld?.completed_at}`));
  });

  it('deletes the pieces no segment is stored as, never those of the one being written', async () => {
    const world = new World();
    enabledArchive(world, 'db_1');
    const key = (timeline: number, segno: bigint) =>
      segmentKey(PROJECT, 'db_1', timeline, segmentName(timeline, segno));
    // Segments 11 and 4 (past retention) stored as pieces instead.
    world.segments = world.segments.filter((s) => s.segno !== 11n && s.segno !== 4n);
    world.objects.delete(key(2, 11n));
    world.objects.delete(key(2, 4n));
    world.addSegment('db_1', 2, 11n, [100, 300, WAL_SEGMENT_BYTES]);
    world.addSegment('db_1', 2, 4n, [100, WAL_SEGMENT_BYTES]);
    const stray = [
      pieceKey(key(2, 12n), 0, 100), // segment 12 is stored whole
      `${key(2, 12n)}.partial`, // as an earlier version uploaded it
      pieceKey(key(2, 11n), 100, 200), // not in segment 11's chain
      pieceKey(key(1, 21n), 0, 100), // another timeline
    ];
    const writing = [pieceKey(key(2, 13n), 0, 100), `${key(2, 13n)}.partial`];
    // Stray too, but a restore planned a moment ago may fetch it.
    const linked = pieceKey(key(2, 12n), 0, 200);
    // Past retention: it goes with its segment, however fresh.
    const old = pieceKey(key(2, 4n), 0, 50);
    for (const object of [linked, old]) world.fresh.add(object);
    for (const object of [...stray, ...writing, linked, old]) world.objects.add(object);

    await world.sweep().sweep();

    for (const object of stray) assert.ok(!world.objects.has(object), object);
    for (const object of [...writing, linked]) assert.ok(world.objects.has(object), object);
    for (const object of pieceKeys(key(2, 11n), [100, 300, WAL_SEGMENT_BYTES]))
      assert.ok(world.objects.has(object), `segment 11 is stored as ${object}`);
    assert.ok(
      ![...world.objects].some((object) => object.startsWith(key(2, 4n))),
      'a segment past retention goes with its pieces',
    );
  });

  it('sweeps nothing while another replica holds the lock, or before the archive begins', async () => {
    const world = new World();
    enabledArchive(world, 'db_1');
    world.lockFree = false;
    await world.sweep().sweep();
    assert.deepEqual(world.events, []);

    world.lockFree = true;
    world.archives.set('db_1', archiveRow('db_1', { startLsn: null, timeline: null }));
    await world.sweep().sweep();
    assert.deepEqual(world.events, []);
  });

  it('goes on with the other archives when one fails', async () => {
    const world = new World();
    enabledArchive(world, 'db_a');
    enabledArchive(world, 'db_b');
    world.backups.delete('db_a');

    await world.sweep().sweep();

    assert.equal(world.segmentNames('db_a').length, 11);
    assert.equal(world.segmentNames('db_b').length, 5);
  });

  it('deletes a disabled archive whole once its retention has passed and its receiver stopped', async () => {
    const world = new World();
    const disabled = (id: string, more: Partial<ArchiveEntity>) => {
      enabledArchive(world, id, { enabled: false, ...more });
      world.objects.add(pieceKey(segmentKey(PROJECT, id, 2, segmentName(2, 13n)), 0, 100));
    };
    disabled('db_recent', { disabledAt: ago(1) });
    disabled('db_stopping', {
      disabledAt: ago(3),
      leaseOwner: 'worker-b',
      leaseExpiresAt: new Date(Date.now() + 5000),
    });
    disabled('db_old', { disabledAt: ago(3) });
    disabled('db_old_slot', { disabledAt: ago(3), slotToDrop: true });

    await world.sweep().sweep();

    for (const kept of ['db_recent', 'db_stopping']) {
      assert.equal(world.segmentNames(kept).length, 11, kept);
      assert.ok(world.archives.has(kept), kept);
    }
    for (const gone of ['db_old', 'db_old_slot']) {
      assert.deepEqual(world.segmentNames(gone), [], gone);
      assert.ok(![...world.objects].some((k) => k.startsWith(walPrefix(PROJECT, gone))), gone);
    }
    assert.ok(!world.archives.has('db_old'));
    assert.ok(world.archives.has('db_old_slot'), 'kept while its slot is still to drop');
    assert.deepEqual(world.droppedSlots, ['db_old_slot']);
  });

  it('leaves a disabled archive enabled again meanwhile alone', async () => {
    const world = new World();
    enabledArchive(world, 'db_1', { enabled: false, disabledAt: ago(3) });
    // Enabled between the sweep's listing and the row's lock.
    world.afterListing = () => world.archives.set('db_1', archiveRow('db_1'));

    await world.sweep().sweep();

    assert.equal(world.segmentNames('db_1').length, 11);
    assert.ok(world.archives.get('db_1')?.enabled);
    assert.ok(!world.events.some((e) => e.startsWith('delete')));
  });
});
