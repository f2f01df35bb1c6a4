import { Injectable, Logger } from '@nestjs/common';
import type { Database, DatabaseRef, RequestContext } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { assertTimeLeft } from '@pgcloud/messaging';
import { ProvisionerConfig } from '../config.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabasesRepository } from '../databases/databases.repository.js';
import { DatabasesService } from '../databases/databases.service.js';
import { toDatabase } from '../databases/database-view.js';
import { DatabaseDriver } from '../drivers/database-driver.js';

/**
 * `POST .../storage/cleanup` (docs/api/databases.md#cleanup): the fence of a database
 * lifts for STORAGE_CLEANUP_WINDOW_SECONDS with the soft read-only mode in place, so its
 * owner can delete rows inside `BEGIN READ WRITE`; once per STORAGE_CLEANUP_COOLDOWN_SECONDS.
 * The storage watch closes the window early if the data grows past twice the grace, or by
 * the grace past what it was when the window opened when that is more.
 */
@Injectable()
export class StorageCleanup {
  private readonly logger = new Logger(StorageCleanup.name);

  constructor(
    private readonly records: DatabasesRepository,
    private readonly databases: DatabasesService,
    private readonly jobs: DatabaseJobs,
    private readonly driver: DatabaseDriver,
    private readonly config: ProvisionerConfig,
  ) {}

  /**
   * Opens a window on a fenced database. One that is not fenced is answered as it is, but
   * within the cooldown of a window, fenced or not, the answer is COOLDOWN_ACTIVE.
   */
  async open(ctx: RequestContext, ref: DatabaseRef): Promise<Database> {
    const record = await this.databases.findOwned(ctx, ref);
    if (record.status !== 'running')
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${record.name} is ${record.status}, not running.`,
      );
    // Asked again within the cooldown, fenced or not (a window may be open still).
    this.assertCooledDown(record);
    if (!record.storageFencedAt) return toDatabase(record);
    assertTimeLeft(ctx); // not after the caller has answered 503
    await this.jobs.withServerLock(record.platformServiceId, async () => {
      const now = await this.records.find(record.id);
      if (!now?.storageFencedAt || now.status !== 'running') return;
      this.assertCooledDown(now);
      const usedBytes = await this.driver.usedBytes(now.platformServiceId);
      await this.driver.unfence(now.platformServiceId);
      // Read-only for new transactions at once; the owner writes with BEGIN READ WRITE.
      await this.driver.setReadOnly(now.platformServiceId, true);
      const at = new Date();
      await this.records.updateStorage(now.id, {
        storageFencedAt: null,
        storageFull: true,
        storageCleanupAt: at,
        storageUsedBytes: usedBytes,
        storageCleanupFromBytes: usedBytes,
        storageCleanupUntil: new Date(
          at.getTime() + this.config.STORAGE_CLEANUP_WINDOW_SECONDS * 1000,
        ),
      });
    });
    this.logger.log(`database ${record.id}: fence lifted for a cleanup window`);
    return toDatabase(await this.records.get(record.id));
  }

  private assertCooledDown(record: DatabaseEntity): void {
    if (!record.storageCleanupAt) return;
    const waitMs =
      record.storageCleanupAt.getTime() +
      this.config.STORAGE_CLEANUP_COOLDOWN_SECONDS * 1000 -
      Date.now();
    if (waitMs > 0)
      throw DomainError.retryLater(
        'COOLDOWN_ACTIVE',
        `A cleanup window was opened ${Math.round(
          (Date.now() - record.storageCleanupAt.getTime()) / 1000,
        )} s ago; the next can open in ${Math.ceil(waitMs / 1000)} s.`,
        waitMs / 1000,
      );
  }
}
