import { Injectable, Logger } from '@nestjs/common';
import { DATABASE_PATTERNS, BACKUP_PATTERNS } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import type {
  BackupsInUse,
  DatabaseRef,
  DisabledPitr,
  EnabledPitr,
  PitrConfig,
  RecoveryWindow,
  RequestContext,
  WalArchivePage,
  WalReceiverStatus,
} from '@pgcloud/contracts';
import { DomainError, PITR_FREE_MAX_RETENTION_DAYS } from '@pgcloud/contracts';
import { assertTimeLeft, requireUser } from '@pgcloud/messaging';
import { segmentOf } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import { Clock } from '../clock.js';
import { PitrWorkerConfig } from '../config.js';
import { PrimarySessions } from '../receivers/primary-session.js';
import type { ArchiveEntity } from './archive.entity.js';
import { archiveReach, heldFrom } from './archive.entity.js';
import { ArchiveRepository } from './archive.repository.js';
import { ArchiveStarter } from './archive-starter.js';
import { toConfig, toReceiverStatus } from './archive-view.js';
import type { BaseBackup } from './recovery-window.js';
import { baseBackupsOf, recoveryWindow, windowBase } from './recovery-window.js';
import { ReceiverLeases } from './receiver-leases.repository.js';
import { SegmentRepository } from './segment.repository.js';
import { walPrefix } from './wal-keys.js';

const SEGMENT_NAME = /^[0-9A-F]{24}$/;
const DEFAULT_PAGE = 100;
// How long delete waits for the replica running the receiver to stop it.
const RECEIVER_STOP_WAIT_MS = 4000;
const RECEIVER_STOP_POLL_MS = 250;

/** PITR of a database (docs/api/pitr.md): settings, archive, window and receiver. */
@Injectable()
export class PitrService {
  private readonly logger = new Logger(PitrService.name);

  constructor(
    private readonly rpc: RpcClient,
    private readonly archives: ArchiveRepository,
    private readonly segments: SegmentRepository,
    private readonly leases: ReceiverLeases,
    private readonly starter: ArchiveStarter,
    private readonly store: ObjectStore,
    private readonly sessions: PrimarySessions,
    private readonly clock: Clock,
    private readonly config: PitrWorkerConfig,
  ) {}

  async getConfig(ctx: RequestContext, ref: DatabaseRef): Promise<PitrConfig> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    const archive = await this.archives.find(database.id);
    const window = archive?.enabled ? await this.window(ctx, archive) : null;
    return toConfig(archive, window);
  }

  /**
   * Takes a base backup and starts the receiver; answered at once with the receiver
   * `starting`. Enabled already: only retention_days changes.
   */
  async enable(ctx: RequestContext, ref: DatabaseRef, retentionDays: number): Promise<EnabledPitr> {
    const ownerId = requireUser(ctx);
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    // After existence and ownership, before state (docs/api/errors.md#the-order-of-checks).
    if (ctx.tier !== 'pro' && retentionDays > PITR_FREE_MAX_RETENTION_DAYS)
      throw new DomainError(
        'QUOTA_EXCEEDED',
        `The Free tier keeps PITR at most ${PITR_FREE_MAX_RETENTION_DAYS} days.`,
      );
    const current = await this.archives.find(database.id);
    if (current?.enabled) return this.changeRetention(ctx, current, retentionDays);
    if (current) this.assertCooledDown(current);
    if (database.status !== 'running')
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${database.name} is ${database.status}; PITR needs it running.`,
      );
    assertTimeLeft(ctx); // not after the caller has answered 503
    const enabled = await this.archives.enable({
      databaseId: database.id,
      projectId: database.project_id,
      ownerId,
      databaseName: database.name,
      retentionDays,
    });
    if (!enabled) {
      // Enabled by a request that came in meanwhile.
      const now = await this.archives.get(database.id);
      return this.changeRetention(ctx, now, retentionDays);
    }
    try {
      const started = await this.starter.start(ctx, database.id);
      this.logger.log(`PITR of ${database.id} enabled (${retentionDays} days)`);
      return {
        enabled: true,
        base_backup_id: started.baseBackupId ?? '',
        wal_receiver_status: 'starting',
      };
    } catch (err) {
      // Not begun: PITR stays off, and the slot, if it was made, is dropped by the sweep.
      await this.archives.abandonStart(database.id);
      throw err;
    }
  }

  /**
   * Each enable takes a full base backup, so PITR enabled again too soon after a disable
   * is refused until PITR_REENABLE_COOLDOWN_SECONDS have passed. An enable that never
   * began (no archive position) does not count.
   */
  private assertCooledDown(archive: ArchiveEntity): void {
    if (archive.disabledAt === null || archive.startLsn === null) return;
    const readyAt =
      archive.disabledAt.getTime() + this.config.PITR_REENABLE_COOLDOWN_SECONDS * 1000;
    const waitMs = readyAt - this.clock.now();
    if (waitMs > 0)
      throw DomainError.retryLater(
        'COOLDOWN_ACTIVE',
        `PITR was disabled moments ago and can be enabled again in ${Math.ceil(waitMs / 1000)} s (each enable takes a full base backup).`,
        waitMs / 1000,
      );
  }

  private async changeRetention(
    ctx: RequestContext,
    archive: ArchiveEntity,
    retentionDays: number,
  ): Promise<EnabledPitr> {
    if (archive.retentionDays !== retentionDays) {
      await this.archives.setRetention(archive.databaseId, retentionDays);
      this.logger.log(`PITR of ${archive.databaseId} keeps ${retentionDays} days now`);
    }
    return {
      enabled: true,
      base_backup_id: archive.baseBackupId ?? '',
      wal_receiver_status: archive.receiverStatus,
    };
  }

  /** Stops the receiver (its replica sees it within a second) and drops the slot. */
  async disable(ctx: RequestContext, ref: DatabaseRef): Promise<DisabledPitr> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    if (await this.archives.disable(database.id)) {
      this.logger.log(`PITR of ${database.id} disabled`);
      await this.dropSlot(ctx, database.id);
    }
    return { enabled: false, wal_receiver_status: 'stopped' };
  }

  /** Drops the slot of a disabled archive; when the server cannot be reached, the sweep retries. */
  async dropSlot(ctx: RequestContext, databaseId: string): Promise<void> {
    try {
      const archive = await this.archives.get(databaseId);
      if (archive.enabled) return; // enabled again meanwhile: the slot is the new archive's
      const source = await this.rpc.call(
        DATABASE_PATTERNS.backupSource,
        { ...ctx, userId: archive.ownerId },
        { database_id: databaseId },
      );
      const session = await this.sessions.open(source);
      try {
        await session.dropSlot();
      } finally {
        await session.close();
      }
      await this.archives.slotDropped(databaseId);
    } catch (err) {
      this.logger.warn(`slot of ${databaseId} not dropped yet: ${String(err)}`);
    }
  }

  async wal(
    ctx: RequestContext,
    ref: DatabaseRef,
    page: { limit?: number; cursor?: string },
  ): Promise<WalArchivePage> {
    const archive = await this.enabledArchive(ctx, ref);
    if (page.cursor !== undefined && !SEGMENT_NAME.test(page.cursor))
      throw new DomainError('VALIDATION_ERROR', 'cursor must be a next_cursor of this list');
    const limit = page.limit ?? DEFAULT_PAGE;
    const { segments, count, sizeBytes } = await this.segments.page(
      {
        databaseId: archive.databaseId,
        timeline: archive.timeline ?? 0,
        firstSegno: archive.startLsn === null ? 0n : segmentOf(archive.startLsn),
      },
      page.cursor,
      limit,
    );
    const shown = segments.slice(0, limit);
    return {
      archives: shown.map((s) => ({
        filename: s.name,
        size_bytes: s.sizeBytes,
        archived_at: s.archivedAt.toISOString(),
      })),
      total_count: count,
      total_size_bytes: sizeBytes,
      next_cursor: segments.length > limit ? (shown.at(-1)?.name ?? null) : null,
    };
  }

  async recoveryWindow(ctx: RequestContext, ref: DatabaseRef): Promise<RecoveryWindow> {
    return this.window(ctx, await this.enabledArchive(ctx, ref));
  }

  async receiverStatus(ctx: RequestContext, ref: DatabaseRef): Promise<WalReceiverStatus> {
    return toReceiverStatus(await this.enabledArchive(ctx, ref), new Date());
  }

  /** A new receiver: the replica running it restarts it; started_at anew, errors 0. */
  async restartReceiver(ctx: RequestContext, ref: DatabaseRef): Promise<WalReceiverStatus> {
    const archive = await this.enabledArchive(ctx, ref);
    await this.archives.restartReceiver(archive.databaseId);
    this.logger.log(`receiver of ${archive.databaseId} restarts`);
    return toReceiverStatus(await this.archives.get(archive.databaseId), new Date());
  }

  /** For backup-service's expiry sweep: from when each database's window needs its backups. */
  async backupsInUse(databaseIds: string[]): Promise<BackupsInUse> {
    const archives = databaseIds.length ? await this.archives.enabledAmong(databaseIds) : [];
    return {
      keep_from: Object.fromEntries(
        archives.map((a) => [a.databaseId, heldFrom(a.keepFrom ?? a.enabledAt, a).toISOString()]),
      ),
    };
  }

  /**
   * For the provisioner, when it removes a database: the receiver stops, then the WAL
   * objects go, then the records. OPERATION_IN_PROGRESS while a replica still runs the
   * receiver (the provisioner's job asks again).
   */
  async deleteForDatabase(ctx: RequestContext, databaseId: string): Promise<{ deleted: number }> {
    const archive = await this.archives.find(databaseId);
    if (!archive) return { deleted: 0 };
    await this.archives.disableForRemoval(databaseId);
    const deadline = this.clock.now() + RECEIVER_STOP_WAIT_MS;
    while (await this.leases.isHeld(databaseId)) {
      if (this.clock.now() > deadline)
        throw new DomainError('OPERATION_IN_PROGRESS', 'The WAL receiver is still stopping.');
      await this.clock.sleep(RECEIVER_STOP_POLL_MS);
    }
    const deleted = await this.store.deletePrefix(walPrefix(archive.projectId, databaseId));
    await this.archives.transaction(async (manager) => {
      await this.segments.deleteAll(databaseId, manager);
      await this.archives.delete(databaseId, manager);
    });
    this.logger.log(`PITR of ${databaseId} removed, ${deleted} WAL object(s)`);
    return { deleted };
  }

  /** The recovery window of an enabled archive, on the backups backup-service holds. */
  async window(ctx: RequestContext, archive: ArchiveEntity): Promise<RecoveryWindow> {
    if (archive.startLsn === null || archive.timeline === null)
      return recoveryWindow(undefined, null, null);
    const bases = baseBackupsOf(
      (await this.rpc.call(BACKUP_PATTERNS.forArchive, ctx, { database_id: archive.databaseId }))
        .backups,
      {
        timeline: archive.timeline,
        startLsn: archive.startLsn,
        startedAt: archive.enabledAt,
      },
    );
    return this.windowOn(archive, bases);
  }

  /** The recovery window on the archive's base backups (see baseBackupsOf). */
  windowOn(archive: ArchiveEntity, bases: BaseBackup[]): RecoveryWindow {
    const base = windowBase(bases, this.retentionCutoff(archive));
    return recoveryWindow(base, archiveReach(archive).to, archive.latestWalTime);
  }

  retentionCutoff(archive: ArchiveEntity, now = Date.now()): Date {
    return new Date(now - archive.retentionDays * this.config.PITR_RETENTION_DAY_SECONDS * 1000);
  }

  async enabledArchive(ctx: RequestContext, ref: DatabaseRef): Promise<ArchiveEntity> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    const archive = await this.archives.find(database.id);
    if (!archive?.enabled)
      throw new DomainError(
        'PITR_NOT_ENABLED',
        `PITR is not enabled for database ${database.name}.`,
      );
    return archive;
  }
}
