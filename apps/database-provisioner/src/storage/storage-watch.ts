import { Injectable, Logger } from '@nestjs/common';
import { DATABASE_EVENTS } from '@pgcloud/contracts';
import { Outbox } from '@pgcloud/messaging';
import { DatabaseJobs } from '../databases/database.jobs.js';
import { ProvisionerConfig } from '../config.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabasesRepository } from '../databases/databases.repository.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { DiskWatermark } from './disk-watermark.js';
import { storageAction, storageEdges } from './storage-limit.js';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

/**
 * What the reconcile pass does about a running server's size (docs/api/databases.md#storage):
 * read-only at its limit and writable below 90% of it; fenced past the limit by the grace
 * (twice the grace while a cleanup window is open), where servers share a disk.
 */
@Injectable()
export class StorageWatch {
  private readonly logger = new Logger(StorageWatch.name);

  constructor(
    private readonly databases: DatabasesRepository,
    private readonly driver: DatabaseDriver,
    private readonly jobs: DatabaseJobs,
    private readonly watermark: DiskWatermark,
    private readonly outbox: Outbox,
    private readonly config: ProvisionerConfig,
  ) {}

  /**
   * Once a pass, after every server was looked at: when the shared disk is under its
   * watermark, the running server furthest over its limit (by what it took at its last
   * look) is fenced, whether or not it passed the grace; the next pass takes the next.
   */
  async checkDisk(): Promise<void> {
    const freePercent = await this.watermark.shortOfRoom();
    if (freePercent === undefined) return;
    const candidates = await this.databases.runningUnfenced();
    const [furthest] = candidates.sort(
      (a, b) => overLimit(b) - overLimit(a) || b.storageUsedBytes - a.storageUsedBytes,
    );
    if (!furthest) return;
    this.logger.warn(
      `DATA_DIR has ${freePercent.toFixed(1)}% free, under DATA_DIR_MIN_FREE_PERCENT=` +
        `${this.config.DATA_DIR_MIN_FREE_PERCENT}: fencing database ${furthest.id}, the ` +
        'furthest over its limit',
    );
    await this.jobs.withServerLock(furthest.platformServiceId, async () => {
      const record = await this.databases.find(furthest.id);
      if (record?.status !== 'running' || record.storageFencedAt) return;
      await this.fence(record, await this.driver.usedBytes(record.platformServiceId));
    });
  }

  /**
   * One look at a running server, under its lock. The size is looked at first, so a
   * failure there never keeps a full server writable. Then, at the limit or not (simpler,
   * and the default is writable anyway), settings the owner made to lift the read-only
   * mode are reset; at the limit, sessions that started writable under them are ended too.
   */
  async check(record: DatabaseEntity, now = new Date()): Promise<void> {
    const used = await this.driver.usedBytes(record.platformServiceId);
    const cleaning = record.storageCleanupUntil !== null && record.storageCleanupUntil > now;
    const { fenceAtBytes } = storageEdges(
      record.config.storage,
      {
        percent: this.config.STORAGE_FENCE_GRACE_PERCENT,
        minMib: this.config.STORAGE_FENCE_GRACE_MIN_MIB,
      },
      cleaning && { fromBytes: record.storageCleanupFromBytes },
    );
    if (record.storageFencedAt || (this.driver.sharesDisk && used >= fenceAtBytes))
      return this.fence(record, used);
    const action = storageAction(used, record.config.storage, record.storageFull);
    const atLimit = action === 'none' ? record.storageFull : action === 'make-read-only';
    if (action !== 'none') {
      await this.driver.setReadOnly(record.platformServiceId, atLimit);
      const usedMib = Math.round(used / MIB);
      if (atLimit)
        this.logger.warn(
          `database ${record.id} uses ${usedMib} MiB of ${record.config.storage} GiB: read-only`,
        );
      else this.logger.log(`database ${record.id} is down to ${usedMib} MiB: writable again`);
    }
    await this.databases.updateStorage(record.id, {
      storageFull: atLimit,
      storageUsedBytes: used,
      // A window that ended is forgotten; the next needs the cooldown all the same.
      ...(record.storageCleanupUntil && !cleaning ? { storageCleanupUntil: null } : {}),
    });
    const changed = await this.driver.enforceLimits(record.platformServiceId, {
      databaseName: record.name,
      storageGib: record.config.storage,
      atLimit,
    });
    if (changed.length > 0) this.logger.warn(`database ${record.id}: ${changed.join(', ')}`);
  }

  /**
   * The fence: the server is held as a read-only standby of itself (reads go on, no write
   * of any kind, an open transaction ends), so one tenant cannot fill the disk the others'
   * servers share. It stays held (again after a restart, or a restore that gave up) until
   * a restore brings the data under, the owner opens a cleanup window, or the database is
   * deleted. Fenced first, then recorded and announced with `database.storage_fenced`.
   */
  private async fence(record: DatabaseEntity, used: number): Promise<void> {
    await this.driver.fence(record.platformServiceId);
    if (record.storageFencedAt) {
      await this.databases.updateStorage(record.id, { storageUsedBytes: used });
      return;
    }
    const limitBytes = record.config.storage * GIB;
    await this.databases.transaction(async (manager) => {
      if (!(await this.databases.recordFenced(manager, record.id, used))) return;
      await this.outbox.add(
        manager,
        DATABASE_EVENTS.storageFenced,
        { requestId: `storage-watch-${record.id}` },
        {
          database_id: record.id,
          project_id: record.projectId,
          used_bytes: used,
          limit_bytes: limitBytes,
        },
      );
    });
    this.logger.warn(
      `database ${record.id} uses ${Math.round(used / MIB)} MiB of its ` +
        `${record.config.storage} GiB: fenced (held read-only)`,
    );
  }
}

/** Bytes past its storage limit (negative when under it). */
function overLimit(record: DatabaseEntity): number {
  return record.storageUsedBytes - record.config.storage * GIB;
}
