import { Injectable, Logger } from '@nestjs/common';
import { withRequestId } from '@pgcloud/observability';
import { BACKUP_PATTERNS } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { RequestContext } from '@pgcloud/contracts';
import { parseSegmentName, segmentOf } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import type { StoredObject } from '@pgcloud/storage';
import type { ArchiveEntity } from '../archive/archive.entity.js';
import { heldFrom } from '../archive/archive.entity.js';
import { ArchiveRepository } from '../archive/archive.repository.js';
import { PitrService } from '../archive/pitr.service.js';
import { baseBackupsOf, windowBase } from '../archive/recovery-window.js';
import { SegmentRepository } from '../archive/segment.repository.js';
import type { SegmentEntity } from '../archive/segment.entity.js';
import type { Piece } from '../archive/wal-keys.js';
import { WAL_LINK_SECONDS, pieceKeys, pieceOf, walPrefix } from '../archive/wal-keys.js';
import { PitrWorkerConfig } from '../config.js';
import { SweepLock } from './sweep-lock.repository.js';

const DELETE_BATCH = 500;

/** A recorded segment's objects: the whole segment, or its pieces. */
function objectsOf(segment: SegmentEntity): string[] {
  return segment.pieceEnds ? pieceKeys(segment.objectKey, segment.pieceEnds) : [segment.objectKey];
}

/**
 * Retention (docs/architecture.md#the-wal-archive-inside): WAL older than the base backup the
 * window starts from is deleted, objects first, records after; so is what earlier archives of the
 * database left (before a re-enable). The base backup the window rests on is recorded as keep_from,
 * which backup-service's expiry sweep asks for. A disabled archive goes whole when its retention
 * has passed; slots that could not be dropped are dropped.
 */
@Injectable()
export class RetentionSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionSweep.name);
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly rpc: RpcClient,
    private readonly lock: SweepLock,
    private readonly archives: ArchiveRepository,
    private readonly segments: SegmentRepository,
    private readonly pitr: PitrService,
    private readonly store: ObjectStore,
    private readonly config: PitrWorkerConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    }, this.config.PITR_SWEEP_INTERVAL_SECONDS * 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One round, when this replica gets the lock; failures are logged and retried next round. */
  sweep(): Promise<void> {
    const ctx: RequestContext = { requestId: `pitr-sweep-${Date.now()}` };
    // Logged as one request: every line of the round carries its id.
    return withRequestId(ctx.requestId, async () => {
      try {
        await this.lock.whileHeld(async () => {
          const archives = await this.archives.all();
          for (const archive of archives) {
            try {
              if (archive.enabled) await this.trim(ctx, archive);
              else await this.retire(ctx, archive);
            } catch (err) {
              this.logger.warn(`sweep of ${archive.databaseId}: ${String(err)}`);
            }
          }
        });
      } catch (err) {
        this.logger.warn(`PITR sweep failed: ${String(err)}`);
      }
    });
  }

  /** Deletes the WAL the window no longer needs and records which backups it does. */
  private async trim(ctx: RequestContext, archive: ArchiveEntity): Promise<void> {
    if (archive.startLsn === null || archive.timeline === null) return;
    const bases = baseBackupsOf(
      (await this.rpc.call(BACKUP_PATTERNS.forArchive, ctx, { database_id: archive.databaseId }))
        .backups,
      {
        timeline: archive.timeline,
        startLsn: archive.startLsn,
        startedAt: archive.enabledAt,
      },
    );
    const base = windowBase(bases, this.cutoff(archive));
    const keepFrom = segmentOf(base?.startLsn ?? archive.startLsn);
    if (base) await this.archives.setKeepFrom(archive.databaseId, base.completedAt);
    const old = await this.segments.beforeRetention(
      archive.databaseId,
      archive.timeline,
      keepFrom,
      DELETE_BATCH,
    );
    const listed = await this.store.list(walPrefix(archive.projectId, archive.databaseId));
    // Past retention, every piece of an old segment goes with it, whatever its age.
    const oldNames = new Set(old.map((s) => s.name));
    const oldPieces = listed.flatMap((o) => {
      const piece = pieceOf(o);
      return piece && oldNames.has(piece.name) ? [piece.key] : [];
    });
    const stray = await this.strayPieces(archive, listed);
    const keys = [...new Set([...old.flatMap(objectsOf), ...oldPieces, ...stray])];
    if (keys.length === 0) return;
    await this.store.deleteKeys(keys);
    if (old.length > 0) await this.segments.deleteEach(old);
    this.logger.log(`${old.length} WAL segment(s) of ${archive.databaseId} past retention deleted`);
  }

  /**
   * Pieces no segment needs, once the links to them have expired: those of segments
   * completed since and stored otherwise (as one object, or a chain without them), and
   * those of earlier timelines. The archive's
   * position is read after the listing: the receiver may have moved on to a new segment
   * (and its pieces) since the round began; a completed segment is recorded before the
   * position passes it.
   */
  private async strayPieces(
    archive: ArchiveEntity,
    objects: readonly StoredObject[],
  ): Promise<string[]> {
    // A piece just made stray may be what a restore planned before is about to fetch.
    const linkedSince = Date.now() - WAL_LINK_SECONDS * 1000;
    const listed = objects.filter((o) => (o.lastModified?.getTime() ?? 0) < linkedSince);
    const now = await this.archives.findEnabled(archive.databaseId);
    if (!now?.archivedLsn || now.timeline === null) return [];
    const writing = segmentOf(now.archivedLsn);
    const done = listed.map(pieceOf).filter((piece): piece is Piece => {
      const segment = piece && parseSegmentName(piece.name);
      return !!segment && (segment.timeline !== now.timeline || segment.segno < writing);
    });
    const names = [...new Set(done.map((piece) => piece.name))];
    const records = await this.segments.named(archive.databaseId, names);
    const kept = new Set(records.flatMap(objectsOf));
    return done.map((piece) => piece.key).filter((key) => !kept.has(key));
  }

  /** Now - retention; earlier while a pending restore holds an older base backup. */
  private cutoff(archive: ArchiveEntity): Date {
    return heldFrom(this.pitr.retentionCutoff(archive), archive);
  }

  /** A disabled archive: its slot dropped at once, its WAL once its retention has passed. */
  private async retire(ctx: RequestContext, archive: ArchiveEntity): Promise<void> {
    if (archive.slotToDrop) await this.pitr.dropSlot(ctx, archive.databaseId);
    const disabledAt = archive.disabledAt?.getTime() ?? 0;
    const retentionMs = archive.retentionDays * this.config.PITR_RETENTION_DAY_SECONDS * 1000;
    if (disabledAt + retentionMs > Date.now()) return;
    if (archive.leaseOwner !== null && (archive.leaseExpiresAt?.getTime() ?? 0) > Date.now())
      return; // its receiver is still stopping
    // Under the row's lock, still disabled: an enable meanwhile waits, and its archive is
    // never the one deleted here.
    const deleted = await this.archives.transaction(async (manager) => {
      const still = await this.archives.lockDisabled(archive.databaseId, manager);
      if (!still) return 0;
      const objects = await this.store.deletePrefix(
        walPrefix(archive.projectId, archive.databaseId),
      );
      await this.segments.deleteAll(archive.databaseId, manager);
      // A slot still to drop keeps the record, so the sweep goes on trying.
      if (!still.slotToDrop) await this.archives.delete(archive.databaseId, manager);
      return objects;
    });
    this.logger.log(
      `disabled archive of ${archive.databaseId} past retention: ` +
        `${deleted} WAL object(s) deleted`,
    );
  }
}
