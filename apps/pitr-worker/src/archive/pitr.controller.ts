import { Controller } from '@nestjs/common';
import type { PitrRestoreDto, PitrTargetFields } from '@pgcloud/contracts';
import {
  RestorePointRequest,
  DatabaseIdRef,
  DatabaseIdsRequest,
  DatabaseRef,
  EnablePitrRequest,
  PITR_PATTERNS,
  PitrPlanRequest,
  PitrRestoreRequest,
  RequestContext,
  WalPageRequest,
} from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
import { PitrRestores } from '../restores/pitr-restores.service.js';
import { RestorePoints } from '../restores/restore-points.service.js';
import { PitrService } from './pitr.service.js';

/** Message handlers of pitr-worker. */
@Controller()
export class PitrController {
  constructor(
    private readonly pitr: PitrService,
    private readonly restores: PitrRestores,
    private readonly restorePoints: RestorePoints,
  ) {}

  @Handles(PITR_PATTERNS.config)
  config(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.getConfig(ctx, databaseRefOf(body));
  }

  @Handles(PITR_PATTERNS.enable)
  enable(@MessageCtx() ctx: RequestContext, @MessageBody() body: EnablePitrRequest) {
    return this.pitr.enable(ctx, databaseRefOf(body), body.retention_days);
  }

  @Handles(PITR_PATTERNS.disable)
  disable(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.disable(ctx, databaseRefOf(body));
  }

  @Handles(PITR_PATTERNS.wal)
  wal(@MessageCtx() ctx: RequestContext, @MessageBody() body: WalPageRequest) {
    return this.pitr.wal(ctx, databaseRefOf(body), {
      ...(body.limit === undefined ? {} : { limit: body.limit }),
      ...(body.cursor === undefined ? {} : { cursor: body.cursor }),
    });
  }

  @Handles(PITR_PATTERNS.recoveryWindow)
  recoveryWindow(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.recoveryWindow(ctx, databaseRefOf(body));
  }

  @Handles(PITR_PATTERNS.receiverStatus)
  receiverStatus(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.receiverStatus(ctx, databaseRefOf(body));
  }

  @Handles(PITR_PATTERNS.restartReceiver)
  restartReceiver(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.restartReceiver(ctx, databaseRefOf(body));
  }

  @Handles(PITR_PATTERNS.restore)
  restore(@MessageCtx() ctx: RequestContext, @MessageBody() body: PitrRestoreRequest) {
    return this.restores.restore(ctx, databaseRefOf(body), restoreOf(body));
  }

  @Handles(PITR_PATTERNS.planRestore)
  planRestore(@MessageCtx() ctx: RequestContext, @MessageBody() body: PitrRestoreRequest) {
    return this.restores.planRestore(ctx, databaseRefOf(body), restoreOf(body));
  }

  @Handles(PITR_PATTERNS.restorePlan)
  restorePlan(@MessageCtx() ctx: RequestContext, @MessageBody() body: PitrPlanRequest) {
    return this.restores.plan(ctx, { database_id: body.database_id, ...targetOf(body) });
  }

  @Handles(PITR_PATTERNS.createRestorePoint)
  createRestorePoint(@MessageCtx() ctx: RequestContext, @MessageBody() body: RestorePointRequest) {
    return this.restorePoints.create(ctx, databaseRefOf(body), body.point_name);
  }

  @Handles(PITR_PATTERNS.restorePoints)
  restorePointList(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.restorePoints.list(ctx, databaseRefOf(body));
  }

  @Handles(PITR_PATTERNS.pauseForRestore)
  pauseForRestore(@MessageBody() body: DatabaseIdRef) {
    return this.restores.pauseForRestore(body.database_id);
  }

  @Handles(PITR_PATTERNS.backupsInUse)
  backupsInUse(@MessageBody() body: DatabaseIdsRequest) {
    return this.pitr.backupsInUse(body.database_ids);
  }
}

/** A restore's target and where it goes, and nothing else the message carries. */
function restoreOf(body: PitrRestoreRequest): PitrRestoreDto & Pick<PitrRestoreRequest, 'branch'> {
  return {
    ...targetOf(body),
    ...(body.target_database == null ? {} : { target_database: body.target_database }),
    ...(body.branch == null ? {} : { branch: body.branch }),
  };
}

/** The one target a message names (validation let exactly one through). */
function targetOf(body: PitrTargetFields): PitrTargetFields {
  if (body.target_lsn != null) return { target_lsn: body.target_lsn };
  if (body.target_restore_point != null) return { target_restore_point: body.target_restore_point };
  return { target_time: body.target_time ?? '' };
}

/** The database a message names, and nothing else it carries. */
function databaseRefOf(body: DatabaseRef): DatabaseRef {
  return { project_id: body.project_id, name: body.name };
}
