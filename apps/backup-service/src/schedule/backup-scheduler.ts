import { Injectable, Logger } from '@nestjs/common';
import { withRequestId } from '@pgcloud/observability';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { RequestContext, RunningDatabase } from '@pgcloud/contracts';
import { isUniqueViolation } from '@pgcloud/postgres';
import { DATABASE_PATTERNS, PITR_PATTERNS } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { BackupServiceConfig } from '../config.js';
import type { BackupEntity } from '../backups/backup.entity.js';
import { BackupJobs } from '../backups/backup.jobs.js';
import { BackupRemoval } from '../backups/backup-removal.js';
import { backupsOverdue } from '../backups/backup.metrics.js';
import { BackupsRepository } from '../backups/backups.repository.js';
import { BackupsService } from '../backups/backups.service.js';
import { AutomatedExpiry } from './automated-expiry.js';
import { scheduleSlot } from './backup-schedule.js';
import type { ExpiredBackup } from './pitr-keep.js';
import { neededByPitr } from './pitr-keep.js';

// At most this many backups deleted a round, found in pages of this size...
const SWEEP_BATCH = 100;
// ...looking through at most this many pages, past expired backups PITR still needs.
const SWEEP_PAGES = 10;
// A database is overdue a period and this much (or a second period, when shorter) after
// its last completed backup.
const OVERDUE_MARGIN_MS = 3_600_000;

/** An expired backup as the sweep pages through them. */
type SweepCandidate = ExpiredBackup & Pick<BackupEntity, 'expiresAt'>;

/**
 * Automated backups: on each tick, one replica queues a backup for every running
 * database that has none in its current period, and deletes expired backups (objects
 * first) that PITR no longer needs. The (database, period) unique index makes a second
 * backup in a period impossible, whichever replica ticks.
 */
@Injectable()
export class BackupScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BackupScheduler.name);
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(
    private readonly rpc: RpcClient,
    private readonly records: BackupsRepository,
    private readonly expiry: AutomatedExpiry,
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
  tick(): Promise<void> {
    const ctx: RequestContext = { requestId: `schedule-${Date.now()}` };
    // Logged as one request: every line of the round carries its id.
    return withRequestId(ctx.requestId, async () => {
      try {
        // Every replica ticks; the one that takes the lock does the round, the others skip it.
        let ran = false;
        await this.records.inScheduleTurn(async () => {
          ran = true;
          await this.scheduleDue(ctx);
          await this.sweepExpired(ctx);
        });
        // Another replica ran the round: its count is the one (alerts take the max).
        if (!ran) backupsOverdue.set(0);
      } catch (err) {
        this.logger.warn(`schedule round failed: ${String(err)}`);
      }
    });
  }

  private async scheduleDue(ctx: RequestContext): Promise<void> {
    const now = Date.now();
    const intervalMs = this.config.BACKUP_SCHEDULE_INTERVAL_SECONDS * 1000;
    const running = (await this.rpc.call(DATABASE_PATTERNS.running, ctx, {})).databases;
    const due = await this.withoutBackupInSlot(running, now, intervalMs);
    await this.countOverdue(running, due, now, intervalMs);
    if (due.length === 0) return;
    const expiresAt = await this.expiry.forOwners(
      ctx,
      due.map((d) => d.owner_id),
      now,
    );
    for (const database of due) {
      try {
        await this.backups.insert(
          ctx,
          { id: database.database_id, project_id: database.project_id, name: database.name },
          database.owner_id,
          {
            type: 'automated',
            scheduleSlot: String(scheduleSlot(database.database_id, now, intervalMs)),
            expiresAt: expiresAt(database.owner_id),
          },
        );
      } catch (err) {
        if (!isUniqueViolation(err)) throw err; // another round made it first
      }
    }
    this.jobs.wake();
  }

  /**
   * Counts the running databases with no backup completed in a period and a margin (an
   * hour, or the period when shorter) and none under way; those due this round are about
   * to have one.
   */
  private async countOverdue(
    running: RunningDatabase[],
    due: RunningDatabase[],
    now: number,
    intervalMs: number,
  ): Promise<void> {
    const dueNow = new Set(due.map((d) => d.database_id));
    const ids = running.map((d) => d.database_id).filter((id) => !dueNow.has(id));
    const since = new Date(now - intervalMs - Math.min(intervalMs, OVERDUE_MARGIN_MS));
    const backedUp = await this.records.backedUpSince(ids, since);
    backupsOverdue.set(ids.filter((id) => !backedUp.has(id)).length);
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
    const existing = await this.records.inSlots([...slots.keys()], [...new Set(slots.values())]);
    const done = new Set(
      existing.filter((b) => slots.get(b.databaseId) === b.scheduleSlot).map((b) => b.databaseId),
    );
    return running.filter((d) => !done.has(d.database_id));
  }

  /**
   * Deletes expired backups but those PITR still needs for its window. Without pitr-worker's
   * answer nothing is deleted this round: a backup wrongly deleted cannot come back.
   */
  private async sweepExpired(ctx: RequestContext): Promise<void> {
    const deletable = await this.expiredUnneeded(ctx);
    let removed = 0;
    for (const id of deletable) if (await this.removal.remove(id)) removed++;
    if (removed > 0) this.logger.log(`${removed} expired backup(s) deleted`);
  }

  /** Up to SWEEP_BATCH expired backups, oldest expiry first, that PITR does not need. */
  private async expiredUnneeded(ctx: RequestContext): Promise<string[]> {
    const now = new Date();
    const deletable: string[] = [];
    let after: SweepCandidate | undefined;
    for (let page = 0; page < SWEEP_PAGES && deletable.length < SWEEP_BATCH; page++) {
      const candidates = await this.records.expiredPage(now, after, SWEEP_BATCH);
      if (candidates.length === 0) break;
      const keepFrom = await this.keepFrom(ctx, candidates);
      if (!keepFrom) return [];
      for (const backup of candidates)
        if (!neededByPitr(backup, keepFrom)) deletable.push(backup.id);
      if (candidates.length < SWEEP_BATCH) break;
      after = candidates.at(-1);
    }
    return deletable.slice(0, SWEEP_BATCH);
  }

  /** pitr-worker's keep_from for the candidates' databases; undefined when it did not answer. */
  private async keepFrom(
    ctx: RequestContext,
    candidates: SweepCandidate[],
  ): Promise<Record<string, string> | undefined> {
    const databaseIds = [...new Set(candidates.map((b) => b.databaseId))];
    try {
      return (await this.rpc.call(PITR_PATTERNS.backupsInUse, ctx, { database_ids: databaseIds }))
        .keep_from;
    } catch (err) {
      this.logger.warn(
        `pitr-worker did not say which backups PITR needs, ` +
          `so no expired backup is deleted this round: ${String(err)}`,
      );
      return undefined;
    }
  }
}
