import { Injectable } from '@nestjs/common';
import {
  BACKUP_PATTERNS,
  DomainError,
  fromMicros,
  microsOf,
  parseTargetTime,
} from '@pgcloud/contracts';
import type {
  DatabaseRef,
  PitrPlanRequest,
  PitrRestoreDto,
  PitrTargetFields,
  RequestContext,
} from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { formatLsn, parseLsn, segmentOf, segmentStart } from '@pgcloud/postgres';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ArchiveEntity } from '../archive/archive.entity.js';
import { archiveReach } from '../archive/archive.entity.js';
import { ArchiveRepository } from '../archive/archive.repository.js';
import { PitrService } from '../archive/pitr.service.js';
import type { BaseBackup } from '../archive/recovery-window.js';
import { baseBackupsOf, windowBase } from '../archive/recovery-window.js';
import { SegmentRepository } from '../archive/segment.repository.js';
import { RestorePoints } from './restore-points.service.js';

// How long a plan waits for the archive to reach the target (`latest` just accepted).
const CATCH_UP_WAIT_MS = 3000;
// How long an in-place `latest` waits for the archive to reach the moment it was accepted:
// a few flush intervals, and never more than half the time the request has left.
const LATEST_WAIT_MS = 10_000;

/** What accept() found: the archive, the base backup, the target as recorded. */
export interface AcceptedTarget {
  archive: ArchiveEntity;
  base: BaseBackup | undefined;
  target: PitrTargetFields;
  /** Where replay stops, when that is known before it runs: a position, a restore point. */
  stopLsn?: bigint;
  /** The target, for the log. */
  stopsAt: string;
}

/**
 * A PITR restore's target against the archive (docs/api/pitr.md#restoring): a time, a WAL
 * position or a restore point checked against the recovery window, the base backup replay
 * starts from, the archive caught up with the target, the WAL in between.
 */
@Injectable()
export class RestoreTargets {
  constructor(
    private readonly rpc: RpcClient,
    private readonly archives: ArchiveRepository,
    private readonly segments: SegmentRepository,
    private readonly pitr: PitrService,
    private readonly restorePoints: RestorePoints,
  ) {}

  /**
   * A request's target checked against the recovery window, and the base backup replay
   * would start from: the newest that ends before the target. `waitForArchive`: a target
   * the server has passed but the archive not yet (`latest` in place, a restore point just
   * made) is waited for, as a restore must; a dry run does not wait.
   */
  async accept(
    ctx: RequestContext,
    ref: DatabaseRef,
    request: PitrRestoreDto,
    waitForArchive: boolean,
  ): Promise<AcceptedTarget> {
    const acceptedAt = new Date();
    const archive = await this.pitr.enabledArchive(ctx, ref);
    if (request.target_time === undefined)
      return this.acceptPosition(ctx, archive, request, waitForArchive);
    const latest = request.target_time === 'latest';
    const target = latest ? fromMicros(microsOf(acceptedAt)) : parseTargetTime(request.target_time);
    if (!target)
      throw new DomainError('VALIDATION_ERROR', 'target_time is not a valid ISO 8601 timestamp', [
        { field: 'target_time', message: 'must be an ISO 8601 timestamp with a zone, or latest' },
      ]);
    const bases = await this.basesOf(ctx, archive);
    const window = this.pitr.windowOn(archive, bases);
    const beyond = !window.to || target.micros > microsOf(new Date(window.to));
    if (archive.archiveState === 'broken' && (latest || beyond))
      throw new DomainError(
        'TARGET_TIME_INVALID',
        `The WAL archive is broken (${archive.archiveProblem ?? 'a segment is missing'}): ` +
          (window.from && window.to
            ? `the recovery window ends at ${window.to}.`
            : 'no moment after its base backup can be reached.'),
      );
    if (!window.from || !window.to) throw windowNotOpen();
    const outside =
      target.micros < microsOf(new Date(window.from)) ||
      (!latest && target.micros > microsOf(new Date(window.to)));
    if (outside)
      throw new DomainError(
        'TARGET_TIME_INVALID',
        `target_time must lie within the recovery window, ${window.from} to ${window.to}.`,
      );
    // In place, the provisioner puts the server on hold as it accepts, and the receiver does
    // not stream from a held server: what was committed up to `latest` must be in the
    // archive before then.
    if (waitForArchive && latest && request.target_database === undefined)
      await this.caughtUp(archive.databaseId, coveredAt(target.micros), latestWaitMs(ctx)).catch(
        (err) => {
          throw isStillBehind(err) ? archiveBehind() : err;
        },
      );
    return {
      archive,
      base: bases.filter((b) => microsOf(b.completedAt) <= target.micros).at(-1),
      target: { target_time: target.iso },
      stopsAt: target.iso,
    };
  }

  /**
   * A WAL position or a restore point: within the window's positions, from the end of its
   * base backup to what the archive holds.
   */
  private async acceptPosition(
    ctx: RequestContext,
    archive: ArchiveEntity,
    request: PitrRestoreDto,
    waitForArchive: boolean,
  ): Promise<AcceptedTarget> {
    const point = request.target_restore_point;
    const lsn =
      point === undefined
        ? parseLsn(request.target_lsn ?? '')
        : (await this.restorePoints.find(archive, point)).lsn;
    const bases = await this.basesOf(ctx, archive);
    const from = windowBase(bases, this.pitr.retentionCutoff(archive))?.endLsn ?? null;
    if (waitForArchive && point !== undefined && from !== null && lsn >= from)
      await this.caughtUp(archive.databaseId, archivedPast(lsn), latestWaitMs(ctx)).catch((err) => {
        throw isStillBehind(err) ? archiveBehind() : err;
      });
    const current = (await this.archives.findEnabled(archive.databaseId)) ?? archive;
    const to = archiveReach(current).lsn;
    if (from === null || to === null) throw windowNotOpen();
    if (lsn < from || lsn > to)
      throw new DomainError(
        'TARGET_TIME_INVALID',
        `${point === undefined ? 'target_lsn' : `Restore point ${point}`} must lie within ` +
          `the recovery window's WAL positions, ${formatLsn(from)} to ${formatLsn(to)}.`,
      );
    return {
      archive: current,
      base: bases.filter((b) => b.endLsn !== null && b.endLsn <= lsn).at(-1),
      target:
        point === undefined ? { target_lsn: formatLsn(lsn) } : { target_restore_point: point },
      stopLsn: lsn,
      stopsAt: formatLsn(lsn),
    };
  }

  /**
   * The archive's segments from the one holding `from` to the one holding `to`: how many,
   * and their bytes (of the segment still being written, what is archived of it).
   */
  async walBetween(
    archive: ArchiveEntity,
    from: bigint,
    to: bigint | null,
  ): Promise<{ files: number; bytes: number }> {
    if (archive.timeline === null || to === null || to < from) return { files: 0, bytes: 0 };
    const [first, last] = [segmentOf(from), segmentOf(to)];
    const completed = (await this.segments.onTimeline(archive.databaseId, archive.timeline)).filter(
      (segment) => segment.segno >= first && segment.segno <= last,
    );
    let bytes = completed.reduce((sum, segment) => sum + segment.sizeBytes, 0);
    if (!completed.some((segment) => segment.segno === last))
      bytes += Number(to - segmentStart(last));
    return { files: Number(last - first) + 1, bytes };
  }

  /**
   * The archive once it reaches the target, the base backup replay starts from (the newest
   * that ends before the target), and the target as the plan names it.
   */
  async reached(
    ctx: RequestContext,
    databaseId: string,
    request: PitrPlanRequest,
  ): Promise<{ archive: ArchiveEntity; base: BaseBackup; target: PitrTargetFields }> {
    let archive: ArchiveEntity;
    let base: BaseBackup | undefined;
    let target: PitrTargetFields;
    if (request.target_time !== undefined) {
      const time = parseTargetTime(request.target_time);
      if (!time) throw new DomainError('VALIDATION_ERROR', 'target_time is malformed.');
      archive = await this.caughtUp(databaseId, coveredAt(time.micros), CATCH_UP_WAIT_MS);
      base = (await this.basesOf(ctx, archive))
        .filter((b) => microsOf(b.completedAt) <= time.micros)
        .at(-1);
      target = { target_time: time.iso };
    } else {
      const point = request.target_restore_point;
      const enabled = await this.archives.findEnabled(databaseId);
      if (!enabled) throw notEnabled();
      const lsn =
        point === undefined
          ? parseLsn(request.target_lsn ?? '')
          : (await this.restorePoints.find(enabled, point)).lsn;
      archive = await this.caughtUp(databaseId, archivedPast(lsn), CATCH_UP_WAIT_MS);
      base = (await this.basesOf(ctx, archive))
        .filter((b) => b.endLsn !== null && b.endLsn <= lsn)
        .at(-1);
      target =
        point === undefined ? { target_lsn: formatLsn(lsn) } : { target_restore_point: point };
    }
    if (!base) throw noBaseBefore();
    return { archive, base, target };
  }

  /**
   * The archive once it has `reached` the target, waiting `waitMs` at most;
   * OPERATION_IN_PROGRESS while it has not.
   */
  private async caughtUp(
    databaseId: string,
    reached: (archive: ArchiveEntity) => boolean,
    waitMs: number,
  ): Promise<ArchiveEntity> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const archive = await this.archives.findEnabled(databaseId);
      if (!archive) throw notEnabled();
      if (reached(archive)) return archive;
      if (Date.now() > deadline)
        throw new DomainError(
          'OPERATION_IN_PROGRESS',
          'The archive has not reached the target time yet.',
        );
      await sleep(200);
    }
  }

  private async basesOf(ctx: RequestContext, archive: ArchiveEntity): Promise<BaseBackup[]> {
    if (archive.startLsn === null || archive.timeline === null) return [];
    return baseBackupsOf(
      (await this.rpc.call(BACKUP_PATTERNS.forArchive, ctx, { database_id: archive.databaseId }))
        .backups,
      {
        timeline: archive.timeline,
        startLsn: archive.startLsn,
        startedAt: archive.enabledAt,
      },
    );
  }
}

/** The archive's window reaches a moment. */
function coveredAt(micros: bigint): (archive: ArchiveEntity) => boolean {
  return (archive) => {
    const { to } = archiveReach(archive);
    return to !== null && microsOf(to) >= micros;
  };
}

/** The archive holds the WAL up to a position. */
function archivedPast(lsn: bigint): (archive: ArchiveEntity) => boolean {
  return (archive) => {
    const reach = archiveReach(archive).lsn;
    return reach !== null && reach >= lsn;
  };
}

export function windowNotOpen(): DomainError {
  return new DomainError(
    'TARGET_TIME_INVALID',
    'The recovery window is not open yet: the first base backup is still being taken.',
  );
}

export function noBaseBefore(): DomainError {
  return new DomainError(
    'TARGET_TIME_INVALID',
    'No base backup of the archive ends before the target.',
  );
}

function latestWaitMs(ctx: RequestContext, now: number = Date.now()): number {
  return ctx.deadline === undefined
    ? LATEST_WAIT_MS
    : Math.min(LATEST_WAIT_MS, Math.max(0, (ctx.deadline - now) / 2));
}

function isStillBehind(err: unknown): boolean {
  return err instanceof DomainError && err.code === 'OPERATION_IN_PROGRESS';
}

/** Nothing was started: the receiver is behind (reconnecting, say) and will catch up. */
function archiveBehind(): DomainError {
  return new DomainError(
    'SERVICE_UNAVAILABLE',
    'The WAL archive has not caught up with the database yet, so `latest` cannot be restored ' +
      'in place now; nothing was changed. Try again in a moment, or see the receiver status.',
  );
}

export function notEnabled(): DomainError {
  return new DomainError('PITR_NOT_ENABLED', 'PITR is not enabled for the database.');
}
