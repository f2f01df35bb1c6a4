import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { RequestContext, RunningDatabase } from '@pgcloud/contracts';
import { isUniqueViolation } from '@pgcloud/postgres';
import { DataSource, In, LessThan } from 'typeorm';
import { AuthClient } from '../clients/auth.client.js';
import { DatabasesClient } from '../clients/databases.client.js';
import { BackupServiceConfig } from '../config.js';
import { BackupEntity } from '../backups/backup.entity.js';
import { BackupJobs } from '../backups/backup.jobs.js';
import { BackupRemoval } from '../backups/backup-removal.js';
import { BackupsService } from '../backups/backups.service.js';
import { expiryOf, scheduleSlot } from './backup-schedule.js';

// Every replica ticks; the one that takes this lock does the round, the others skip it.
const SCHEDULE_LOCK = 'backups.schedule';
const SWEEP_BATCH = 100;

/**
 * Automated backups: on each tick, one replica queues a backup for every running
 * database that has none in its current period, and deletes expired backups (objects
 * first). The (database, period) unique index makes a second backup in a period
 * impossible, whichever replica ticks.
 */
@Injectable()
export class BackupScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BackupScheduler.name);
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly databases: DatabasesClient,
    private readonly auth: AuthClient,
    private readonly backups: BackupsService,
    private readonly removal: BackupRemoval,
    private readonly jobs: BackupJobs,
    private readonly config: BackupServiceConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
    }, this.config.BACKUP_CHECK_INTERVAL_SECONDS * 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
  }

  /** One round, when this replica gets the lock; failures are logged and retried next tick. */
  async tick(): Promise<void> {
    const ctx: RequestContext = { requestId: `schedule-${Date.now()}` };
    try {
      await this.dataSource.transaction(async (manager) => {
        const [row] = await manager.query<{ locked: boolean }[]>(
          'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
          [SCHEDULE_LOCK],
        );
        if (!row?.locked) return;
        await this.scheduleDue(ctx);
        await this.sweepExpired(ctx);
      });
    } catch (err) {
      this.logger.warn(`[${ctx.requestId}] schedule round failed: ${String(err)}`);
    }
  }

  private async scheduleDue(ctx: RequestContext): Promise<void> {
    const now = Date.now();
    const intervalMs = this.config.BACKUP_SCHEDULE_INTERVAL_SECONDS * 1000;
    const running = await this.databases.running(ctx);
    const due = await this.withoutBackupInSlot(running, now, intervalMs);
    if (due.length === 0) return;
    const tiers = await this.auth.tiers(ctx, [...new Set(due.map((d) => d.owner_id))]);
    const retention = {
      free: this.config.BACKUP_RETENTION_FREE_SECONDS,
      pro: this.config.BACKUP_RETENTION_PRO_SECONDS,
    };
    for (const database of due) {
      try {
        await this.backups.insert(
          ctx,
          { id: database.database_id, project_id: database.project_id, name: database.name },
          database.owner_id,
          {
            type: 'automated',
            scheduleSlot: String(scheduleSlot(database.database_id, now, intervalMs)),
            expiresAt: expiryOf(tiers[database.owner_id], now, retention),
          },
        );
      } catch (err) {
        if (!isUniqueViolation(err)) throw err; // another round made it first
      }
    }
    this.jobs.wake();
  }

  private async withoutBackupInSlot(
    running: RunningDatabase[],
    now: number,
    intervalMs: number,
  ): Promise<RunningDatabase[]> {
    if (running.length === 0) return [];
    const slots = new Map(
      running.map((d) => [d.database_id, String(scheduleSlot(d.database_id, now, intervalMs))]),
    );
    const existing = await this.dataSource.getRepository(BackupEntity).find({
      select: { databaseId: true, scheduleSlot: true },
      where: { databaseId: In([...slots.keys()]), scheduleSlot: In([...new Set(slots.values())]) },
    });
    const done = new Set(
      existing.filter((b) => slots.get(b.databaseId) === b.scheduleSlot).map((b) => b.databaseId),
    );
    return running.filter((d) => !done.has(d.database_id));
  }

  private async sweepExpired(ctx: RequestContext): Promise<void> {
    const expired = await this.dataSource.getRepository(BackupEntity).find({
      select: { id: true },
      where: { expiresAt: LessThan(new Date()), status: In(['completed', 'failed']) },
      order: { expiresAt: 'ASC' },
      take: SWEEP_BATCH,
    });
    let removed = 0;
    for (const backup of expired) if (await this.removal.remove(backup.id)) removed++;
    if (removed > 0) this.logger.log(`[${ctx.requestId}] ${removed} expired backup(s) deleted`);
  }
}
