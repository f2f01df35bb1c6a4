import { Injectable } from '@nestjs/common';
import type { DatabaseRef, RequestContext, RestorePoint } from '@pgcloud/contracts';
import { DATABASE_PATTERNS, DomainError, RESTORE_POINT_LIMITS } from '@pgcloud/contracts';
import { RpcClient, assertTierQuota } from '@pgcloud/messaging';
import { formatLsn, parseLsn } from '@pgcloud/postgres';
import type { ArchiveEntity } from '../archive/archive.entity.js';
import { PitrService } from '../archive/pitr.service.js';
import type { RestorePointEntity } from './restore-point.entity.js';
import type { ArchiveOfPoints } from './restore-points.repository.js';
import { RestorePointsRepository } from './restore-points.repository.js';

/**
 * Restore points: a name for a WAL position, written into the WAL by the database's server
 * and kept here for the archive it belongs to, at most RESTORE_POINT_LIMITS per archive. A
 * new archive (after an in-place restore, or PITR enabled anew) starts with none.
 */
@Injectable()
export class RestorePoints {
  constructor(
    private readonly rpc: RpcClient,
    private readonly pitr: PitrService,
    private readonly points: RestorePointsRepository,
  ) {}

  async create(ctx: RequestContext, ref: DatabaseRef, name: string): Promise<RestorePoint> {
    const archive = await this.pitr.enabledArchive(ctx, ref);
    const { timeline, startLsn } = archive;
    if (timeline === null || startLsn === null)
      throw new DomainError(
        'OPERATION_IN_PROGRESS',
        'The WAL archive is still starting; try again in a moment.',
      );
    // One at a time per database: the name is checked, written by the server and recorded
    // together, so the first point of a name in the WAL is the one recorded.
    const ofArchive = { databaseId: archive.databaseId, timeline, archiveStartLsn: startLsn };
    return this.points.inTurn(ofArchive, async (turn) => {
      if (await turn.exists(name))
        throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
          { field: 'name', message: `a restore point named ${name} exists in the archive` },
        ]);
      assertTierQuota(
        ctx.tier,
        await turn.count(),
        RESTORE_POINT_LIMITS,
        'restore points per archive',
        'a new archive (after an in-place restore, or PITR enabled anew) starts with none',
      );
      const { lsn } = await this.rpc.call(DATABASE_PATTERNS.createRestorePoint, ctx, {
        ...ref,
        point_name: name,
      });
      return toRestorePoint(await turn.insert(name, parseLsn(lsn)));
    });
  }

  async list(ctx: RequestContext, ref: DatabaseRef): Promise<{ restore_points: RestorePoint[] }> {
    const archive = await this.pitr.enabledArchive(ctx, ref);
    if (archive.timeline === null || archive.startLsn === null) return { restore_points: [] };
    const points = await this.points.list(pointsOf(archive, archive.timeline, archive.startLsn));
    return { restore_points: points.map(toRestorePoint) };
  }

  /** The archive's restore point of that name; TARGET_TIME_INVALID when it has none. */
  async find(archive: ArchiveEntity, name: string): Promise<RestorePointEntity> {
    const point =
      archive.timeline === null || archive.startLsn === null
        ? null
        : await this.points.find(pointsOf(archive, archive.timeline, archive.startLsn), name);
    if (!point)
      throw new DomainError(
        'TARGET_TIME_INVALID',
        `The current archive has no restore point named ${name} (see GET pitr/restore-points).`,
      );
    return point;
  }
}

/** The points of the archive as it is now: its timeline and start. */
function pointsOf(
  archive: ArchiveEntity,
  timeline: number,
  archiveStartLsn: bigint,
): ArchiveOfPoints {
  return { databaseId: archive.databaseId, timeline, archiveStartLsn };
}

function toRestorePoint(point: RestorePointEntity): RestorePoint {
  return {
    name: point.name,
    lsn: formatLsn(point.lsn),
    created_at: point.createdAt.toISOString(),
  };
}
