import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { RequestContext, Tier } from '@pgcloud/contracts';
import { AUTH_PATTERNS, BACKUP_PATTERNS, newId } from '@pgcloud/contracts';
import { durationMs } from '@pgcloud/config';
import { RpcClient } from '@pgcloud/messaging';
import { withRequestId } from '@pgcloud/observability';
import { isUniqueViolation } from '@pgcloud/postgres';
import { ProvisionerConfig } from '../config.js';
import { DatabasesRepository } from '../databases/databases.repository.js';
import { ServerLockRepository } from '../databases/server-lock.repository.js';
import { drillsOverdue } from './drill.metrics.js';
import { DrillJobs, enqueueDrill } from './drill.jobs.js';
import { drillIntervalMs, drillOverdue, drillSlotStart } from './drill-schedule.js';
import { DrillsRepository } from './drills.repository.js';

/**
 * Automated restore drills (docs/api/drills.md#automated-drills): on each tick, the
 * replica that takes the schedule's lock makes a drill for every running database with a
 * completed backup that has none in its current slot (Free: DRILL_INTERVAL_FREE, Pro:
 * DRILL_INTERVAL_PRO, each database at its own offset in the period), and counts the
 * databases overdue one. The (database, slot) unique index makes a second drill in a slot
 * impossible, whichever replica ticks.
 */
@Injectable()
export class DrillScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DrillScheduler.name);
  private readonly intervals: Record<Tier, number>;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(
    private readonly rpc: RpcClient,
    private readonly databases: DatabasesRepository,
    private readonly drills: DrillsRepository,
    private readonly jobs: DrillJobs,
    private readonly locks: ServerLockRepository,
    private readonly config: ProvisionerConfig,
  ) {
    this.intervals = {
      free: durationMs(config.DRILL_INTERVAL_FREE),
      pro: durationMs(config.DRILL_INTERVAL_PRO),
    };
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
    }, this.config.DRILL_SCHEDULE_SECONDS * 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
  }

  /** One round, when this replica gets the lock; failures are logged and retried next tick. */
  tick(nowMs = Date.now()): Promise<void> {
    const ctx: RequestContext = { requestId: `drill-schedule-${nowMs}` };
    return withRequestId(ctx.requestId, async () => {
      try {
        const ran = await this.locks.hold(
          'pgcloud-drill-schedule',
          async () => {
            await this.scheduleDue(ctx, nowMs);
            return true;
          },
          { wait: false },
        );
        // Another replica ran the round: its count is the one (alerts take the max).
        if (!ran) drillsOverdue.set(0);
      } catch (err) {
        this.logger.warn(`drill schedule round failed: ${String(err)}`);
      }
    });
  }

  private async scheduleDue(ctx: RequestContext, nowMs: number): Promise<void> {
    const running = await this.databases.running();
    if (running.length === 0) return void drillsOverdue.set(0);
    const ids = running.map((d) => d.id);
    const { database_ids: backedUp } = await this.rpc.call(
      BACKUP_PATTERNS.withCompletedBackup,
      ctx,
      { database_ids: ids },
    );
    const drillable = running.filter((d) => backedUp.includes(d.id));
    const { tiers } = await this.rpc.call(AUTH_PATTERNS.tiers, ctx, {
      user_ids: [...new Set(drillable.map((d) => d.ownerId))],
    });
    const planned = drillable.map((database) => {
      const intervalMs = drillIntervalMs(tiers[database.ownerId], this.intervals);
      return { database, intervalMs, slot: drillSlotStart(database.id, nowMs, intervalMs) };
    });
    drillsOverdue.set(planned.filter((p) => drillOverdue(p.database, nowMs, p.intervalMs)).length);
    const due = planned.map((p) => ({ databaseId: p.database.id, slotMs: p.slot }));
    const added = await addDueDrills(this.drills, due, ctx.requestId);
    if (added === 0) return;
    this.logger.log(`${added} automated drills pending`);
    this.jobs.wake();
  }
}

/**
 * Makes an automated drill, with its job, for each database with none in its slot yet;
 * answers how many it made. A drill another replica made first (the unique index), or one
 * already under way for the database, is skipped: the next tick looks again.
 */
export async function addDueDrills(
  drills: DrillsRepository,
  due: readonly { databaseId: string; slotMs: number }[],
  requestId: string,
): Promise<number> {
  const made = await drills.inSlots(
    due.map((d) => d.databaseId),
    [...new Set(due.map((d) => d.slotMs))].map((slot) => new Date(slot)),
  );
  let added = 0;
  for (const { databaseId, slotMs } of due) {
    if (made.has(`${databaseId}@${slotMs}`)) continue;
    const id = newId('drl');
    try {
      await drills.transaction(async (tx) => {
        await drills.insert(tx, {
          id,
          databaseId,
          kind: 'automated',
          status: 'pending',
          phase: 'queued',
          scheduledFor: new Date(slotMs),
        });
        await enqueueDrill(tx, id, requestId);
      });
      added++;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  return added;
}
