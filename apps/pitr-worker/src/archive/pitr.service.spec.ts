import { BACKUP_PATTERNS, DATABASE_PATTERNS } from '@pgcloud/contracts';
import type { BackupSource } from '@pgcloud/contracts';
import { answer, fakeRpcClient } from '@pgcloud/testing';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import type { Database, DatabaseRef, RequestContext } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { segmentName, segmentStart } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { EntityManager } from 'typeorm';
import type { PitrWorkerConfig } from '../config.js';
import type { PrimarySessions } from '../receivers/primary-session.js';
import { ArchiveEntity } from './archive.entity.js';
import type { ArchiveEnabling, ArchiveRepository } from './archive.repository.js';
import type { ArchiveStarter } from './archive-starter.js';
import { PitrService } from './pitr.service.js';
import type { ReceiverLeases } from './receiver-leases.repository.js';
import { SegmentEntity } from './segment.entity.js';
import type { SegmentListing, SegmentRepository } from './segment.repository.js';
import { walPrefix } from './wal-keys.js';

const REF: DatabaseRef = { project_id: 'prj_1', name: 'shop' };
const FREE: RequestContext = { requestId: 'req_1', userId: 'usr_1', tier: 'free' };
const PRO: RequestContext = { ...FREE, tier: 'pro' };
const DAY_SECONDS = 60;
const COOLDOWN_SECONDS = 600;

const expectCode = (code: string) => (err: unknown) =>
  err instanceof DomainError && err.code === code;
/** A fake's side effect, answered as the real method answers: a resolved promise. */
const act = (effect: () => unknown): Promise<void> => {
  effect();
  return Promise.resolve();
};

/** The provisioner, pitr's tables, S3, the primary and the clock, in memory. */
class World {
  databases = new Map<string, Database>();
  archives = new Map<string, ArchiveEntity>();
  segments: SegmentEntity[] = [];
  objects = new Set<string>();
  events: string[] = [];
  unreachable = new Set<string>();
  startError: Error | undefined;
  /** How many more times the receiver shows as held by a replica. */
  heldFor = 0;
  time = 1_000_000;

  addDatabase(id: string, name: string, status: Database['status'] = 'running'): void {
    this.databases.set(name, { id, project_id: REF.project_id, name, status } as Database);
  }

  addArchive(databaseId: string, more: Partial<ArchiveEntity> = {}): ArchiveEntity {
    const archive = Object.assign(new ArchiveEntity(), {
      databaseId,
      projectId: REF.project_id,
      ownerId: 'usr_1',
      enabled: true,
      retentionDays: 3,
      baseBackupId: 'bkp_first',
      timeline: 1,
      startLsn: segmentStart(3n),
      slotToDrop: false,
      keepFrom: null,
      holdFrom: null,
      holdUntil: null,
      enabledAt: new Date('2026-11-20T00:00:00Z'),
      receiverStatus: 'running',
      ...more,
    });
    this.archives.set(databaseId, archive);
    return archive;
  }

  service(): PitrService {
    const rpc = fakeRpcClient(
      answer(DATABASE_PATTERNS.get, (ref: DatabaseRef) => {
        const found = this.databases.get(ref.name);
        return found
          ? Promise.resolve(found)
          : Promise.reject(new DomainError('DATABASE_NOT_FOUND', 'no such database'));
      }),
      answer(DATABASE_PATTERNS.backupSource, ({ database_id }) =>
        this.unreachable.has(database_id)
          ? Promise.reject(new Error('server unreachable'))
          : Promise.resolve({ host: 'h', port: 1 } as BackupSource),
      ),
      answer(BACKUP_PATTERNS.forArchive, () => ({ backups: [] })),
    );
    const row = (id: string) => this.archives.get(id) ?? null;
    const archives = {
      find: (id: string) => Promise.resolve(row(id)),
      get: (id: string) => {
        const found = row(id);
        return found ? Promise.resolve(found) : Promise.reject(new Error('not found'));
      },
      enable: (e: ArchiveEnabling) => {
        if (row(e.databaseId)?.enabled) return Promise.resolve(false);
        this.events.push(`enable ${e.databaseId} for ${e.retentionDays} days`);
        this.addArchive(e.databaseId, { retentionDays: e.retentionDays, startLsn: null });
        return Promise.resolve(true);
      },
      abandonStart: (id: string) =>
        act(() =>
          Object.assign(row(id) ?? {}, {
            enabled: false,
            slotToDrop: true,
            disabledAt: new Date(this.time),
          }),
        ),
      setRetention: (id: string, retentionDays: number) =>
        act(() => this.events.push(`retention ${id} ${retentionDays}`)),
      disable: (id: string) => {
        const found = row(id);
        if (!found?.enabled) return Promise.resolve(false);
        Object.assign(found, { enabled: false, slotToDrop: true, disabledAt: new Date(this.time) });
        return Promise.resolve(true);
      },
      disableForRemoval: (id: string) => act(() => this.events.push(`disable ${id}`)),
      slotDropped: (id: string) => act(() => Object.assign(row(id) ?? {}, { slotToDrop: false })),
      enabledAmong: (ids: string[]) => {
        this.events.push('enabledAmong');
        return Promise.resolve(
          [...this.archives.values()].filter((a) => a.enabled && ids.includes(a.databaseId)),
        );
      },
      transaction: async (work: (manager: EntityManager) => Promise<void>) => {
        this.events.push('begin');
        await work({} as EntityManager);
        this.events.push('commit');
      },
      delete: (id: string) => act(() => this.events.push(`delete archive ${id}`)),
    };
    const segments = {
      page: (listing: SegmentListing, cursor: string | undefined, limit: number) => {
        const all = this.segments.filter(
          (s) => s.databaseId === listing.databaseId && s.segno >= listing.firstSegno,
        );
        return Promise.resolve({
          segments: all.filter((s) => cursor === undefined || s.name > cursor).slice(0, limit + 1),
          count: all.length,
          sizeBytes: all.reduce((sum, s) => sum + s.sizeBytes, 0),
        });
      },
      deleteAll: (id: string) => act(() => this.events.push(`delete segment records of ${id}`)),
    };
    const leases = { isHeld: () => Promise.resolve(this.heldFor-- > 0) };
    const starter = {
      start: (_ctx: RequestContext, id: string) => {
        if (this.startError) return Promise.reject(this.startError);
        this.events.push(`start ${id}`);
        return Promise.resolve(Object.assign(row(id) ?? {}, { baseBackupId: 'bkp_new' }));
      },
    };
    const store = {
      deletePrefix: (prefix: string) => {
        const keys = [...this.objects].filter((k) => k.startsWith(prefix));
        this.events.push(`delete ${keys.length} object(s)`);
        for (const key of keys) this.objects.delete(key);
        return Promise.resolve(keys.length);
      },
    };
    const sessions = {
      open: () =>
        Promise.resolve({
          dropSlot: () => act(() => this.events.push('drop slot')),
          close: () => Promise.resolve(),
        }),
    };
    const clock = {
      now: () => this.time,
      sleep: (ms: number) => act(() => (this.time += ms)),
    };
    return new PitrService(
      rpc,
      archives as unknown as ArchiveRepository,
      segments as unknown as SegmentRepository,
      leases as unknown as ReceiverLeases,
      starter as unknown as ArchiveStarter,
      store as unknown as ObjectStore,
      sessions as unknown as PrimarySessions,
      clock,
      {
        PITR_RETENTION_DAY_SECONDS: DAY_SECONDS,
        PITR_REENABLE_COOLDOWN_SECONDS: COOLDOWN_SECONDS,
      } as PitrWorkerConfig,
    );
  }
}

describe('PitrService', () => {
  before(() => {
    Logger.overrideLogger(false);
  });

  it('holds the Free tier to 7 days, once the database is known to be the caller’s', async () => {
    const world = new World();
    const pitr = world.service();
    await assert.rejects(pitr.enable(FREE, REF, 30), expectCode('DATABASE_NOT_FOUND'));
    world.addDatabase('db_1', 'shop');
    await assert.rejects(pitr.enable(FREE, REF, 8), expectCode('QUOTA_EXCEEDED'));
    assert.deepEqual(world.events, []);

    const enabled = await pitr.enable(PRO, REF, 30);

    assert.deepEqual(enabled, {
      enabled: true,
      base_backup_id: 'bkp_new',
      wal_receiver_status: 'starting',
    });
    assert.deepEqual(world.events, ['enable db_1 for 30 days', 'start db_1']);
  });

  it('enables only a running database', async () => {
    const world = new World();
    world.addDatabase('db_1', 'shop', 'restoring');

    await assert.rejects(world.service().enable(FREE, REF, 3), expectCode('DATABASE_NOT_READY'));

    assert.deepEqual(world.events, []);
  });

  it('leaves PITR off, its slot to drop, when the archive cannot begin', async () => {
    const world = new World();
    world.addDatabase('db_1', 'shop');
    world.startError = new Error('base backup refused');

    await assert.rejects(world.service().enable(FREE, REF, 3), /base backup refused/);

    assert.equal(world.archives.get('db_1')?.enabled, false);
    assert.equal(world.archives.get('db_1')?.slotToDrop, true);
  });

  it('only changes the retention of an archive enabled already', async () => {
    const world = new World();
    world.addDatabase('db_1', 'shop');
    world.addArchive('db_1', { retentionDays: 3 });
    const pitr = world.service();

    const same = await pitr.enable(FREE, REF, 3);
    const longer = await pitr.enable(FREE, REF, 5);

    assert.deepEqual(world.events, ['retention db_1 5']);
    for (const answer of [same, longer])
      assert.deepEqual(answer, {
        enabled: true,
        base_backup_id: 'bkp_first',
        wal_receiver_status: 'running',
      });
  });

  it('enables again only after the cooldown; a start that never began does not count', async () => {
    const world = new World();
    world.addDatabase('db_1', 'shop');
    world.addArchive('db_1');
    const pitr = world.service();
    await pitr.disable(FREE, REF);
    world.events = [];
    world.time += 10_000;

    await assert.rejects(
      pitr.enable(FREE, REF, 3),
      (err) => expectCode('COOLDOWN_ACTIVE')(err) && (err as DomainError).retryAfterSeconds === 590,
    );
    assert.deepEqual(world.events, [], 'nothing was started');
    world.time += 590_000;
    await pitr.enable(FREE, REF, 3);
    assert.deepEqual(world.events, ['enable db_1 for 3 days', 'start db_1']);

    world.addDatabase('db_2', 'cart');
    world.startError = new Error('base backup refused');
    await assert.rejects(pitr.enable(FREE, { ...REF, name: 'cart' }, 3), /base backup refused/);
    world.startError = undefined;
    await pitr.enable(FREE, { ...REF, name: 'cart' }, 3);
    assert.equal(world.archives.get('db_2')?.enabled, true);
  });

  it('drops the slot when disabled; a server out of reach leaves it to the sweep', async () => {
    const world = new World();
    world.addDatabase('db_1', 'shop');
    world.addDatabase('db_2', 'cart');
    world.addArchive('db_1');
    world.addArchive('db_2');
    world.unreachable.add('db_2');
    const pitr = world.service();

    await pitr.disable(FREE, REF);
    await pitr.disable(FREE, REF);
    const answer = await pitr.disable(FREE, { ...REF, name: 'cart' });

    assert.deepEqual(world.events, ['drop slot'], 'dropped once');
    assert.equal(world.archives.get('db_1')?.slotToDrop, false);
    assert.equal(world.archives.get('db_2')?.slotToDrop, true);
    assert.deepEqual(answer, { enabled: false, wal_receiver_status: 'stopped' });
  });

  it('does not drop the slot of an archive enabled again meanwhile', async () => {
    const world = new World();
    world.addArchive('db_1', { enabled: true, slotToDrop: true });

    await world.service().dropSlot(FREE, 'db_1');

    assert.deepEqual(world.events, []);
  });

  it('lists the WAL by pages that follow each other by segment name', async () => {
    const world = new World();
    world.addDatabase('db_1', 'shop');
    world.addArchive('db_1', { startLsn: segmentStart(3n) });
    for (let segno = 2n; segno <= 6n; segno++)
      world.segments.push(
        Object.assign(new SegmentEntity(), {
          databaseId: 'db_1',
          name: segmentName(1, segno),
          segno,
          sizeBytes: 100,
          archivedAt: new Date('2026-11-22T10:00:00Z'),
        }),
      );
    const pitr = world.service();

    const first = await pitr.wal(FREE, REF, { limit: 2 });
    const last = await pitr.wal(FREE, REF, { limit: 2, cursor: first.next_cursor ?? '' });

    assert.deepEqual(
      first.archives.map((a) => a.filename),
      [segmentName(1, 3n), segmentName(1, 4n)],
      'from the archive’s first segment',
    );
    assert.equal(first.next_cursor, segmentName(1, 4n));
    assert.equal(first.total_count, 4);
    assert.equal(first.total_size_bytes, 400);
    assert.deepEqual(
      last.archives.map((a) => a.filename),
      [segmentName(1, 5n), segmentName(1, 6n)],
    );
    assert.equal(last.next_cursor, null);
    await assert.rejects(pitr.wal(FREE, REF, { cursor: 'x' }), expectCode('VALIDATION_ERROR'));
  });

  it('answers PITR_NOT_ENABLED for a database without it', async () => {
    const world = new World();
    world.addDatabase('db_1', 'shop');
    world.addArchive('db_1', { enabled: false });

    await assert.rejects(world.service().recoveryWindow(FREE, REF), expectCode('PITR_NOT_ENABLED'));
  });

  it('tells backup-service from when each enabled archive needs its backups', async () => {
    const world = new World();
    const keepFrom = new Date('2026-11-21T00:00:00Z');
    world.addArchive('db_kept', { keepFrom });
    world.addArchive('db_new');
    world.addArchive('db_held', {
      keepFrom,
      holdFrom: new Date('2026-11-20T12:00:00Z'),
      holdUntil: new Date(Date.now() + 3_600_000),
    });
    world.addArchive('db_off', { enabled: false, keepFrom });
    const pitr = world.service();

    const inUse = await pitr.backupsInUse(['db_kept', 'db_new', 'db_held', 'db_off']);

    assert.deepEqual(inUse.keep_from, {
      db_kept: '2026-11-21T00:00:00.000Z',
      db_new: '2026-11-20T00:00:00.000Z',
      db_held: '2026-11-20T12:00:00.000Z',
    });
    world.events = [];
    assert.deepEqual(await pitr.backupsInUse([]), { keep_from: {} });
    assert.deepEqual(world.events, [], 'no query for no databases');
  });

  it('removes a database’s archive once its receiver stopped: objects first, then records', async () => {
    const world = new World();
    world.addArchive('db_1');
    world.objects.add(`${walPrefix(REF.project_id, 'db_1')}1/${segmentName(1, 3n)}`);
    world.objects.add(`${walPrefix(REF.project_id, 'db_other')}1/${segmentName(1, 3n)}`);
    world.heldFor = 3;

    const answer = await world.service().deleteForDatabase(FREE, 'db_1');

    assert.deepEqual(answer, { deleted: 1 });
    assert.deepEqual(world.events, [
      'disable db_1',
      'delete 1 object(s)',
      'begin',
      'delete segment records of db_1',
      'delete archive db_1',
      'commit',
    ]);
    assert.equal(world.objects.size, 1, 'another database’s WAL stays');
  });

  it('answers OPERATION_IN_PROGRESS while a replica still runs the receiver', async () => {
    const world = new World();
    world.addArchive('db_1');
    world.heldFor = Infinity;

    await assert.rejects(
      world.service().deleteForDatabase(FREE, 'db_1'),
      expectCode('OPERATION_IN_PROGRESS'),
    );

    assert.deepEqual(world.events, ['disable db_1'], 'nothing deleted');
    assert.ok(world.archives.has('db_1'));
    assert.deepEqual(await new World().service().deleteForDatabase(FREE, 'db_x'), { deleted: 0 });
  });

  it('counts retention in days of PITR_RETENTION_DAY_SECONDS', () => {
    const world = new World();
    const archive = world.addArchive('db_1', { retentionDays: 3 });

    const cutoff = world.service().retentionCutoff(archive, 1_000_000);

    assert.equal(cutoff.getTime(), 1_000_000 - 3 * DAY_SECONDS * 1000);
  });
});
