import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { RequestContext } from '@pgcloud/contracts';
import { DATABASE_EVENTS } from '@pgcloud/contracts';
import { Outbox } from '@pgcloud/messaging';
import { withRequestId } from '@pgcloud/observability';
import { ProvisionerConfig } from '../config.js';
import { DatabaseJobs } from './database.jobs.js';
import { DatabasesRepository } from './databases.repository.js';
import { ServerLockRepository } from './server-lock.repository.js';

// Databases removed a round at most; the next round takes the rest.
const SWEEP_BATCH = 100;

/**
 * Databases that expire (docs/api/databases.md#expiry): every DATABASE_EXPIRY_SWEEP_SECONDS
 * the replica that takes the sweep's lock removes the databases whose expires_at passed,
 * as DELETE does (their removal queued, database.deleted announced), and announces
 * database.expired for each, in the same transaction.
 */
@Injectable()
export class DatabaseExpiry implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseExpiry.name);
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly databases: DatabasesRepository,
    private readonly jobs: DatabaseJobs,
    private readonly outbox: Outbox,
    private readonly locks: ServerLockRepository,
    private readonly config: ProvisionerConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    }, this.config.DATABASE_EXPIRY_SWEEP_SECONDS * 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One round, when this replica gets the lock; a failure is logged and retried next round. */
  sweep(): Promise<void> {
    const ctx: RequestContext = { requestId: `expiry-${Date.now()}` };
    return withRequestId(ctx.requestId, async () => {
      try {
        await this.locks.hold('pgcloud-database-expiry', () => this.removeExpired(ctx), {
          wait: false,
        });
      } catch (err) {
        this.logger.warn(`expiry sweep failed: ${String(err)}`);
      }
    });
  }

  private async removeExpired(ctx: RequestContext): Promise<void> {
    const expired = await this.databases.expiredIds(new Date(), SWEEP_BATCH);
    if (expired.length === 0) return;
    const moved = await this.databases.transaction(async (tx) => {
      const removed = await this.jobs.markForRemoval(tx, ctx, expired);
      for (const { id, project_id } of removed)
        await this.outbox.add(tx, DATABASE_EVENTS.expired, ctx, { database_id: id, project_id });
      return removed;
    });
    if (moved.length === 0) return;
    this.logger.log(`expired: removing ${moved.map((d) => d.id).join(', ')}`);
    this.jobs.wake();
  }
}
