import { Injectable, Logger } from '@nestjs/common';
import type { DatabaseConfig, RequestContext } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { ProvisionerConfig } from '../config.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import { DatabasesRepository, moveDatabase } from '../databases/databases.repository.js';
import { assertSizeWithinTier, freeTierLimits } from '../databases/tier-limits.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { ResizeJobs } from './resize.jobs.js';
import { assertStorageFits, resizedConfig } from './resize-rules.js';

/**
 * Resizing asked for by PATCH (docs/api/databases.md#resizing): checked here, in the API's
 * order (QUOTA_EXCEEDED, DATABASE_NOT_READY, STORAGE_IN_USE), then the database moves to
 * `resizing` with its new size and its resize job (resize.jobs.ts) in one transaction.
 */
@Injectable()
export class DatabaseResizes {
  private readonly logger = new Logger(DatabaseResizes.name);

  constructor(
    private readonly databases: DatabasesRepository,
    private readonly databaseJobs: DatabaseJobs,
    private readonly resizeJobs: ResizeJobs,
    private readonly driver: DatabaseDriver,
    private readonly config: ProvisionerConfig,
  ) {}

  /** The new size, checked; undefined when it is the size the database has. */
  async check(
    ctx: RequestContext,
    record: DatabaseEntity,
    change: Partial<DatabaseConfig>,
  ): Promise<DatabaseConfig | undefined> {
    const config = resizedConfig(record.config, change);
    if (!config) return undefined;
    assertSizeWithinTier(ctx.tier, config, freeTierLimits(this.config));
    assertRunning(record);
    const usedBytes =
      config.storage < record.config.storage && this.driver.shrinksStorage
        ? await this.driver.usedBytes(record.platformServiceId)
        : 0;
    assertStorageFits(record.name, record.config, config, {
      usedBytes,
      shrinksStorage: this.driver.shrinksStorage,
    });
    return config;
  }

  /**
   * Moves the database to `resizing` with `config` (and `expiresAt`, when given) and queues
   * its resize; DATABASE_NOT_READY when it left `running` meanwhile.
   */
  async start(
    ctx: RequestContext,
    record: DatabaseEntity,
    config: DatabaseConfig,
    expiresAt?: Date | null,
  ): Promise<void> {
    const started = await this.databases.transaction(async (tx) => {
      if (!(await moveDatabase(tx, record.id, 'resize', { config }))) return false;
      if (expiresAt !== undefined) await this.databases.setExpiry(record.id, expiresAt, tx);
      await this.resizeJobs.enqueue(tx, record.id, record.config, ctx.requestId);
      await this.databaseJobs.announce(tx, ctx, { ...record, status: 'resizing', config });
      return true;
    });
    if (!started)
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${record.name} left running meanwhile: it can be resized once it runs again.`,
      );
    const { cpu, memory, storage } = config;
    this.logger.log(
      `database ${record.id} resizing to cpu ${cpu}, memory ${memory}, storage ${storage}`,
    );
    this.resizeJobs.wake();
  }
}

/** DATABASE_NOT_READY unless the database is running. */
function assertRunning(record: DatabaseEntity): void {
  if (record.status === 'running') return;
  const status = record.status === 'deleting' ? 'being deleted' : record.status;
  throw new DomainError(
    'DATABASE_NOT_READY',
    `Database ${record.name} is ${status}, not running: it can be resized once it runs.`,
  );
}
