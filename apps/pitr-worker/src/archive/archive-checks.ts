import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { ArchiveState, RequestContext } from '@pgcloud/contracts';
import { ARCHIVE_STATES, DATABASE_PATTERNS, PITR_EVENTS } from '@pgcloud/contracts';
import type { ArchiveHealthChanged } from '@pgcloud/contracts';
import { Outbox, RpcClient } from '@pgcloud/messaging';
import { METRICS_PREFIX, withRequestId } from '@pgcloud/observability';
import { segmentOf, segmentStart } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import { Gauge } from 'prom-client';
import { PitrWorkerConfig } from '../config.js';
import { PrimarySessions } from '../receivers/primary-session.js';
import { SweepLock } from '../retention/sweep-lock.repository.js';
import type { ArchiveEntity } from './archive.entity.js';
import type { ArchiveFindings } from './archive-health.js';
import { inspectArchive } from './archive-health.js';
import { ArchiveRepository } from './archive.repository.js';
import { SegmentRepository } from './segment.repository.js';
import { walPrefix } from './wal-keys.js';

/**
 * Enabled archives by what their last check found (no label per database): counted by the
 * replica that checked the round, 0 on the others, so the max over replicas is the count.
 */
const archivesByState = new Gauge({
  name: `${METRICS_PREFIX}pitr_archives`,
  help: 'Enabled WAL archives by the state their last check in the object store found.',
  labelNames: ['state'] as const,
});

/**
 * Archive health (docs/api/pitr.md#archive-health): every PITR_ARCHIVE_CHECK_SECONDS one
 * replica looks at each enabled archive as the object store holds it, not as the receivers
 * believe they uploaded it. `broken`: a recorded segment's object is missing, of another
 * size, or changed (ETag); `stale`: the newest object is older than ARCHIVE_STALE_SECONDS
 * while the primary's WAL reaches past what the store holds, at two checks in a row (one
 * check could fall between the primary's write and the upload of the next piece). A change
 * of state is recorded with its event (archive.stale, archive.broken, or archive.healthy
 * after either) in one transaction. The retention sweep's lock keeps a check from seeing a
 * trim half done.
 */
@Injectable()
export class ArchiveChecks implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ArchiveChecks.name);
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** Archives whose primary was ahead of the store at the last check: where the store was. */
  private readonly behind = new Map<string, bigint | null>();

  constructor(
    private readonly rpc: RpcClient,
    private readonly lock: SweepLock,
    private readonly archives: ArchiveRepository,
    private readonly segments: SegmentRepository,
    private readonly sessions: PrimarySessions,
    private readonly store: ObjectStore,
    private readonly outbox: Outbox,
    private readonly config: PitrWorkerConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
    }, this.config.PITR_ARCHIVE_CHECK_SECONDS * 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }

  /** One round, when this replica gets the lock; a failed check is logged and tried again. */
  checkAll(): Promise<void> {
    const ctx: RequestContext = { requestId: `pitr-archive-check-${Date.now()}` };
    return withRequestId(ctx.requestId, async () => {
      let ran = false;
      try {
        await this.lock.whileHeld(async () => {
          ran = true;
          const counts = new Map<ArchiveState, number>(ARCHIVE_STATES.map((s) => [s, 0]));
          for (const archive of await this.archives.all()) {
            if (!archive.enabled || archive.pausedForRestore) continue;
            if (archive.timeline === null || archive.startLsn === null) continue;
            try {
              const state = await this.check(ctx, archive);
              counts.set(state, (counts.get(state) ?? 0) + 1);
            } catch (err) {
              this.logger.warn(`archive check of ${archive.databaseId}: ${String(err)}`);
            }
          }
          for (const [state, count] of counts) archivesByState.set({ state }, count);
        });
      } catch (err) {
        this.logger.warn(`archive checks failed: ${String(err)}`);
      }
      // Another replica checked this round: its counts are the ones (alerts take the max).
      if (!ran) for (const state of ARCHIVE_STATES) archivesByState.set({ state }, 0);
    });
  }

  private async check(ctx: RequestContext, archive: ArchiveEntity): Promise<ArchiveState> {
    const timeline = archive.timeline ?? 0;
    const first = segmentOf(archive.startLsn ?? 0n);
    // Records first: a segment is recorded only once its objects are in the store.
    const recorded = (await this.segments.onTimeline(archive.databaseId, timeline)).filter(
      (s) => s.segno >= first,
    );
    const listed = await this.store.list(walPrefix(archive.projectId, archive.databaseId));
    const found = inspectArchive(recorded, listed, timeline);
    const now = new Date();
    let state: ArchiveState = 'healthy';
    let problem = found.problem ?? null;
    if (problem) state = 'broken';
    else if (await this.isStale(ctx, archive, found, now)) {
      state = 'stale';
      problem = `nothing new reached the object store for over ${this.config.ARCHIVE_STALE_SECONDS} s while the primary wrote WAL`;
    }
    // Broken: whole up to the segment before the bad one, as far as its commits reach.
    const bad = state === 'broken' ? found.firstBadSegno : undefined;
    const lastWhole = bad === undefined ? undefined : recorded.find((s) => s.segno === bad - 1n);
    await this.archives.transaction(async (manager) => {
      const before = await this.archives.recordCheck(manager, archive.databaseId, {
        state,
        problem,
        checkedAt: now,
        newestObjectAt: found.newestObjectAt,
        intactUntil: lastWhole?.coveredUntil ?? null,
        intactLsn: bad === undefined ? null : segmentStart(bad),
      });
      if (before === undefined || before === state) return;
      if (state === 'healthy' && (before === null || before === 'healthy')) return;
      const payload: ArchiveHealthChanged = {
        database_id: archive.databaseId,
        project_id: archive.projectId,
        state,
        ...(problem ? { problem } : {}),
      };
      if (state === 'stale') await this.outbox.add(manager, PITR_EVENTS.archiveStale, ctx, payload);
      else if (state === 'broken')
        await this.outbox.add(manager, PITR_EVENTS.archiveBroken, ctx, payload);
      else await this.outbox.add(manager, PITR_EVENTS.archiveHealthy, ctx, payload);
      const log = `archive of ${archive.databaseId} is ${state}${problem ? `: ${problem}` : ''}`;
      if (state === 'healthy') this.logger.log(log);
      else this.logger.warn(log);
    });
    return state;
  }

  /**
   * Nothing new for ARCHIVE_STALE_SECONDS while the primary's WAL reaches past what the
   * store holds, and so at the check before too, with the store where it was then. Before
   * the archive's first object, the time counts from when its receiver started.
   */
  private async isStale(
    ctx: RequestContext,
    archive: ArchiveEntity,
    found: ArchiveFindings,
    now: Date,
  ): Promise<boolean> {
    // Before its first object: since its receiver started (a base backup comes first).
    const since = found.newestObjectAt ?? archive.receiverStartedAt;
    if (now.getTime() - since.getTime() <= this.config.ARCHIVE_STALE_SECONDS * 1000) {
      this.behind.delete(archive.databaseId);
      return false;
    }
    const primary = await this.primaryLsn(ctx, archive);
    if (primary === undefined) return archive.archiveState === 'stale';
    const ahead = found.storedLsn === null || primary > found.storedLsn;
    const wasBehindHere =
      this.behind.has(archive.databaseId) &&
      this.behind.get(archive.databaseId) === found.storedLsn;
    if (ahead) this.behind.set(archive.databaseId, found.storedLsn);
    else this.behind.delete(archive.databaseId);
    return ahead && wasBehindHere;
  }

  /** Where the primary's WAL ends now; undefined when its server cannot be reached. */
  private async primaryLsn(
    ctx: RequestContext,
    archive: ArchiveEntity,
  ): Promise<bigint | undefined> {
    try {
      const source = await this.rpc.call(
        DATABASE_PATTERNS.backupSource,
        { ...ctx, userId: archive.ownerId },
        { database_id: archive.databaseId },
      );
      const session = await this.sessions.open(source);
      try {
        return (await session.sample('pgcloud_pitr_archive_check')).lsn;
      } finally {
        await session.close();
      }
    } catch (err) {
      this.logger.warn(
        `cannot ask ${archive.databaseId}'s primary where its WAL ends: ${String(err)}`,
      );
      return undefined;
    }
  }
}
