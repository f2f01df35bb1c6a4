import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
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
import {
  BACKUP_PATTERNS,
  DATABASE_PATTERNS,
  DomainError,
  PITR_FREE_MAX_RETENTION_DAYS,
} from '@pgcloud/contracts';
import { RpcClient, assertTimeLeft, requireUser } from '@pgcloud/messaging';
import { queryRows, segmentOf } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, In, IsNull } from 'typeorm';
import { PitrWorkerConfig } from '../config.js';
import { PrimarySession } from '../receivers/primary-session.js';
import { ArchiveEntity, heldFrom } from './archive.entity.js';
import { ArchiveStarter } from './archive-starter.js';
import { toConfig, toReceiverStatus } from './archive-view.js';
import type { BaseBackup } from './recovery-window.js';
import { baseBackupsOf, recoveryWindow, windowBase } from './recovery-window.js';
import { SegmentEntity } from './segment.entity.js';
import { walPrefix } from './wal-keys.js';

const SEGMENT_NAME = /^[0-9A-F]{24}$/;
const DEFAULT_PAGE = 100;
// How long delete waits for the replica running the receiver to stop it.
const RECEIVER_STOP_WAIT_MS = 4000;

/** PITR of a database (spec/decisions.md section 7): settings, archive, window and receiver. */
@Injectable()
export class PitrService {
  private readonly logger = new Logger(PitrService.name);

  constructor(
    private readonly rpc: RpcClient,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly starter: ArchiveStarter,
    private readonly store: ObjectStore,
    private readonly config: PitrWorkerConfig,
  ) {}

  async getConfig(ctx: RequestContext, ref: DatabaseRef): Promise<PitrConfig> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    const archive = await this.archives().findOneBy({ databaseId: database.id });
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
    // After existence and ownership, before state (spec/decisions.md section 1).
    if (ctx.tier !== 'pro' && retentionDays > PITR_FREE_MAX_RETENTION_DAYS)
      throw new DomainError(
        'QUOTA_EXCEEDED',
        `The Free tier keeps PITR at most ${PITR_FREE_MAX_RETENTION_DAYS} days.`,
      );
    const current = await this.archives().findOneBy({ databaseId: database.id });
    if (current?.enabled) return this.changeRetention(ctx, current, retentionDays);
    if (database.status !== 'running')
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${database.name} is ${database.status}; PITR needs it running.`,
      );
    assertTimeLeft(ctx); // not after the caller has answered 503
    const rows = await queryRows<{ database_id: string }>(
      this.dataSource,
      `INSERT INTO pitr.archives AS a
              (database_id, project_id, owner_id, database_name, enabled, retention_days,
               receiver_status, receiver_started_at)
       VALUES ($1, $2, $3, $4, true, $5, 'starting', now())
       ON CONFLICT (database_id) DO UPDATE
          SET enabled = true, retention_days = $5, owner_id = $3, base_backup_id = NULL,
              timeline = NULL, start_lsn = NULL, archived_lsn = NULL, keep_from = NULL,
              window_to = NULL, latest_wal_time = NULL, last_wal_file = NULL,
              enabled_at = now(), disabled_at = NULL, receiver_status = 'starting',
              receiver_started_at = now(), receiver_errors = 0, bytes_received = 0,
              receiver_generation = a.receiver_generation + 1,
              paused_for_restore = false, paused_at = NULL, slot_to_drop = false
        WHERE NOT a.enabled
       RETURNING database_id`,
      [database.id, database.project_id, ownerId, database.name, retentionDays],
    );
    if (rows.length === 0) {
      // Enabled by a request that came in meanwhile.
      const now = await this.archives().findOneByOrFail({ databaseId: database.id });
      return this.changeRetention(ctx, now, retentionDays);
    }
    try {
      const started = await this.starter.start(ctx, database.id);
      this.logger.log(`[${ctx.requestId}] PITR of ${database.id} enabled (${retentionDays} days)`);
      return {
        enabled: true,
        base_backup_id: started.baseBackupId ?? '',
        wal_receiver_status: 'starting',
      };
    } catch (err) {
      // Not begun: PITR stays off, and the slot, if it was made, is dropped by the sweep.
      await this.archives().update(
        { databaseId: database.id, startLsn: IsNull() },
        { enabled: false, receiverStatus: 'stopped', disabledAt: new Date(), slotToDrop: true },
      );
      throw err;
    }
  }

  private async changeRetention(
    ctx: RequestContext,
    archive: ArchiveEntity,
    retentionDays: number,
  ): Promise<EnabledPitr> {
    if (archive.retentionDays !== retentionDays) {
      await this.archives().update({ databaseId: archive.databaseId }, { retentionDays });
      this.logger.log(
        `[${ctx.requestId}] PITR of ${archive.databaseId} keeps ${retentionDays} days now`,
      );
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
    const moved = await this.archives().update(
      { databaseId: database.id, enabled: true },
      { enabled: false, receiverStatus: 'stopped', disabledAt: new Date(), slotToDrop: true },
    );
    if (moved.affected === 1) {
      this.logger.log(`[${ctx.requestId}] PITR of ${database.id} disabled`);
      await this.dropSlot(ctx, database.id);
    }
    return { enabled: false, wal_receiver_status: 'stopped' };
  }

  /** Drops the slot of a disabled archive; when the server cannot be reached, the sweep retries. */
  async dropSlot(ctx: RequestContext, databaseId: string): Promise<void> {
    try {
      const archive = await this.archives().findOneByOrFail({ databaseId });
      if (archive.enabled) return; // enabled again meanwhile: the slot is the new archive's
      const source = await this.rpc.call(
        DATABASE_PATTERNS.backupSource,
        { ...ctx, userId: archive.ownerId },
        { database_id: databaseId },
      );
      const session = await PrimarySession.open(source);
      try {
        await session.dropSlot();
      } finally {
        await session.close();
      }
      await this.archives().update({ databaseId, enabled: false }, { slotToDrop: false });
    } catch (err) {
      this.logger.warn(`[${ctx.requestId}] slot of ${databaseId} not dropped yet: ${String(err)}`);
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
    const current = this.dataSource
      .getRepository(SegmentEntity)
      .createQueryBuilder('s')
      .where('s.database_id = :id', { id: archive.databaseId })
      .andWhere('s.timeline = :timeline', { timeline: archive.timeline ?? 0 })
      .andWhere('s.segno >= :first', {
        first: archive.startLsn === null ? '0' : segmentOf(archive.startLsn).toString(),
      });
    const totals = await current
      .clone()
      .select('count(*)', 'count')
      .addSelect('coalesce(sum(s.size_bytes), 0)', 'size')
      .getRawOne<{ count: string; size: string }>();
    const rows = await current
      .clone()
      .andWhere(page.cursor === undefined ? 'true' : 's.name > :cursor', { cursor: page.cursor })
      .orderBy('s.name', 'ASC')
      .limit(limit + 1)
      .getMany();
    const shown = rows.slice(0, limit);
    return {
      archives: shown.map((s) => ({
        filename: s.name,
        size_bytes: s.sizeBytes,
        archived_at: s.archivedAt.toISOString(),
      })),
      total_count: Number(totals?.count ?? 0),
      total_size_bytes: Number(totals?.size ?? 0),
      next_cursor: rows.length > limit ? (shown.at(-1)?.name ?? null) : null,
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
    await this.dataSource.query(
      `UPDATE pitr.archives
          SET receiver_generation = receiver_generation + 1, receiver_status = 'starting',
              receiver_started_at = now(), receiver_errors = 0, bytes_received = 0
        WHERE database_id = $1 AND enabled`,
      [archive.databaseId],
    );
    this.logger.log(`[${ctx.requestId}] receiver of ${archive.databaseId} restarts`);
    return toReceiverStatus(
      await this.archives().findOneByOrFail({ databaseId: archive.databaseId }),
      new Date(),
    );
  }

  /** For backup-service's expiry sweep: from when each database's window needs its backups. */
  async backupsInUse(databaseIds: string[]): Promise<BackupsInUse> {
    const archives = databaseIds.length
      ? await this.archives().findBy({ databaseId: In(databaseIds), enabled: true })
      : [];
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
    const archive = await this.archives().findOneBy({ databaseId });
    if (!archive) return { deleted: 0 };
    await this.archives().update(
      { databaseId, enabled: true },
      { enabled: false, receiverStatus: 'stopped', disabledAt: new Date() },
    );
    const deadline = Date.now() + RECEIVER_STOP_WAIT_MS;
    while (await this.receiverHeld(databaseId)) {
      if (Date.now() > deadline)
        throw new DomainError('OPERATION_IN_PROGRESS', 'The WAL receiver is still stopping.');
      await sleep(250);
    }
    const deleted = await this.store.deletePrefix(walPrefix(archive.projectId, databaseId));
    await this.dataSource.transaction(async (manager) => {
      await manager.delete(SegmentEntity, { databaseId });
      await manager.delete(ArchiveEntity, { databaseId });
    });
    this.logger.log(`[${ctx.requestId}] PITR of ${databaseId} removed, ${deleted} WAL object(s)`);
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
    return recoveryWindow(base, archive.windowTo, archive.latestWalTime);
  }

  retentionCutoff(archive: ArchiveEntity, now = Date.now()): Date {
    return new Date(now - archive.retentionDays * this.config.PITR_RETENTION_DAY_SECONDS * 1000);
  }

  private async receiverHeld(databaseId: string): Promise<boolean> {
    const [row] = await queryRows<{ held: boolean }>(
      this.dataSource,
      `SELECT lease_owner IS NOT NULL AND lease_expires_at > now() AS held
         FROM pitr.archives WHERE database_id = $1`,
      [databaseId],
    );
    return row?.held ?? false;
  }

  async enabledArchive(ctx: RequestContext, ref: DatabaseRef): Promise<ArchiveEntity> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    const archive = await this.archives().findOneBy({ databaseId: database.id });
    if (!archive?.enabled)
      throw new DomainError(
        'PITR_NOT_ENABLED',
        `PITR is not enabled for database ${database.name}.`,
      );
    return archive;
  }

  private archives() {
    return this.dataSource.getRepository(ArchiveEntity);
  }
}
