import { Injectable, Logger } from '@nestjs/common';
import { BACKUP_PATTERNS, RESTORE_PATTERNS } from '@pgcloud/contracts';
import type {
  CreatedPitrRestore,
  CreateRestoreRequest,
  DatabaseRef,
  PitrPlanRequest,
  PitrRestoreDto,
  PitrRestoreRequest,
  PitrTargetFields,
  RequestContext,
  RestoreDryRun,
  RestorePlan,
} from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { segmentName, segmentOf, segmentStart } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import type { Transaction } from '../archive/archive.repository.js';
import { ArchiveRepository } from '../archive/archive.repository.js';
import { SegmentRepository } from '../archive/segment.repository.js';
import { WAL_LINK_SECONDS, chainOf, pieceKeys, pieceOf, segmentKey } from '../archive/wal-keys.js';
import { RestoreTargets, noBaseBefore, notEnabled } from './restore-targets.js';

// Links in a plan are used at once by the attempt that asked for it; a retry asks anew.
// How long an accepted restore holds its base backup and WAL against retention.
const HOLD_MS = 6 * 3600_000;

/**
 * PITR restores (docs/api/pitr.md#restoring): the target is checked against the window
 * (RestoreTargets), the provisioner records and runs the restore, and asks here at each
 * attempt for the plan: the base backup the target is reached from, every segment from its
 * start, the segment still being written, and the target.
 */
@Injectable()
export class PitrRestores {
  private readonly logger = new Logger(PitrRestores.name);

  constructor(
    private readonly rpc: RpcClient,
    private readonly archives: ArchiveRepository,
    private readonly segments: SegmentRepository,
    private readonly store: ObjectStore,
    private readonly targets: RestoreTargets,
  ) {}

  async restore(
    ctx: RequestContext,
    ref: DatabaseRef,
    request: PitrRestoreDto & Pick<PitrRestoreRequest, 'branch'>,
  ): Promise<CreatedPitrRestore> {
    const { archive, base, target, stopsAt } = await this.targets.accept(ctx, ref, request, true);
    // The base backup it replays from stays, with the WAL after it, while it runs (an
    // older hold still in force stays too). Held before the provisioner accepts, so no
    // sweep in between takes it; a refused request's hold only lapses later.
    if (base)
      await this.archives.holdForRestore(
        archive.databaseId,
        base.completedAt,
        new Date(Date.now() + HOLD_MS),
      );
    const created = await this.rpc.call(
      RESTORE_PATTERNS.create,
      ctx,
      restoreRequest(ref, request, target),
    );
    this.logger.log(`PITR restore ${created.restore_id} of ${archive.databaseId} to ${stopsAt}`);
    return { ...created, ...target };
  }

  /**
   * `?dry_run=true`: the checks of restore (the provisioner's too, with nothing written),
   * the base backup it would replay from and the WAL segments from its start to the one the
   * target lies in (for a time, which only replay finds: to the end of the archive).
   */
  async planRestore(
    ctx: RequestContext,
    ref: DatabaseRef,
    request: PitrRestoreDto,
  ): Promise<RestoreDryRun> {
    const { archive, base, target, stopLsn } = await this.targets.accept(ctx, ref, request, false);
    if (!base) throw noBaseBefore();
    const wal = await this.targets.walBetween(
      archive,
      base.startLsn,
      stopLsn ?? archive.archivedLsn,
    );
    const { estimated_seconds } = await this.rpc.call(RESTORE_PATTERNS.check, ctx, {
      ...restoreRequest(ref, request, target),
      base_backup_size_bytes: base.sizeBytes,
      wal_files: wal.files,
    });
    return {
      plan: {
        kind: 'pitr',
        base_backup_id: base.id,
        base_backup_size_bytes: base.sizeBytes,
        wal_files: wal.files,
        wal_bytes: wal.bytes,
        ...target,
        estimated_seconds,
      },
    };
  }

  /** For the provisioner, at each attempt: fresh links to the base backup and the WAL. */
  async plan(ctx: RequestContext, request: PitrPlanRequest): Promise<RestorePlan> {
    const databaseId = String(request.database_id);
    const found = await this.targets.reached(ctx, databaseId, request);
    const { archive, base, target } = found;
    if (archive.startLsn === null || archive.timeline === null) throw notEnabled();
    const backup = await this.rpc.call(BACKUP_PATTERNS.restorePlan, ctx, {
      backup_id: base.id,
      database_id: databaseId,
    });
    const segments = await this.segments.onTimeline(archive.databaseId, archive.timeline);
    let next = segmentOf(base.startLsn);
    const wal: NonNullable<RestorePlan['wal_segments']> = [];
    for (const segment of segments) {
      if (segment.segno < next) continue;
      if (segment.segno !== next)
        throw new Error(
          `the archive of ${archive.databaseId} misses ${segmentName(archive.timeline, next)}`,
        );
      const keys = segment.pieceEnds
        ? pieceKeys(segment.objectKey, segment.pieceEnds)
        : [segment.objectKey];
      wal.push({
        name: segment.name,
        urls: await Promise.all(keys.map((key) => this.link(key))),
        partial: false,
        size_bytes: segment.sizeBytes,
        // What S3 answered as each was stored: a drill checks the bytes it downloads by them.
        ...(segment.etags?.length === keys.length ? { etags: segment.etags } : {}),
        ...(segment.zstdBytes !== null ? { compression: 'zstd' as const } : {}),
      });
      next++;
    }
    // Everything up to the archived position, which the window was computed on, must be
    // there: completed segments up to its segment, and the pieces of that one so far.
    const archived = archive.archivedLsn ?? archive.startLsn;
    if (segmentOf(archived) > next)
      throw new Error(
        `the archive of ${archive.databaseId} misses ${segmentName(archive.timeline, next)}`,
      );
    if (segmentOf(archived) === next && archived > segmentStart(next)) {
      const name = segmentName(archive.timeline, next);
      const key = segmentKey(archive.projectId, archive.databaseId, archive.timeline, name);
      // What the window counts on: WAL cut short would pass for the end of the WAL.
      const size = Number(archived - segmentStart(next));
      const objects = await this.store.list(`${key}.`);
      const chain = chainOf(
        objects.map(pieceOf).filter((p) => !!p),
        size,
      );
      if (!chain) throw new Error(`the archive of ${archive.databaseId} misses pieces of ${name}`);
      const urls = await Promise.all(chain.map((piece) => this.link(piece.key)));
      const etags = chain.map((piece) => objects.find((o) => o.key === piece.key)?.etag ?? null);
      wal.push({ name, urls, partial: true, size_bytes: size, etags });
    }
    return { ...backup, wal_segments: wal, ...target };
  }

  /** An in-place restore begins: the receiver stops (its replica sees it within a second). */
  async pauseForRestore(databaseId: string): Promise<Record<string, never>> {
    await this.archives.pauseForRestore(databaseId);
    return {};
  }

  /** It ended: the receiver starts again, and begins a new archive if the data changed. */
  async resumeAfterRestore(
    databaseId: string,
    manager?: Transaction,
  ): Promise<Record<string, never>> {
    await this.archives.resumeAfterRestore(databaseId, manager);
    return {};
  }

  private link(key: string): Promise<string> {
    return this.store.presignedGet(key, { expiresInSeconds: WAL_LINK_SECONDS });
  }
}

/** What the provisioner is asked to restore to, for real or as a dry run. */
function restoreRequest(
  ref: DatabaseRef,
  request: PitrRestoreDto & Pick<PitrRestoreRequest, 'branch'>,
  target: PitrTargetFields,
): CreateRestoreRequest {
  return {
    project_id: ref.project_id,
    name: ref.name,
    kind: 'pitr',
    ...target,
    ...(request.target_database === undefined ? {} : { target_database: request.target_database }),
    // A branch at this point (docs/api/databases.md#branches): the provisioner makes it.
    ...(request.branch === undefined ? {} : { branch: request.branch }),
  };
}
