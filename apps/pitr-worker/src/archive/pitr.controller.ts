import { Controller } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type { DatabaseIdRef, DatabaseRef, PitrPlanRequest } from '@pgcloud/contracts';
import { PITR_PATTERNS, RequestContext } from '@pgcloud/contracts';
import { MessageBody, MessageCtx } from '@pgcloud/messaging';
import { PitrRestores } from '../restores/pitr-restores.service.js';
import { EnablePitrMessage, PitrRestoreMessage, WalPageMessage } from './pitr.messages.js';
import { PitrService } from './pitr.service.js';

/** Message handlers of pitr-worker. */
@Controller()
export class PitrController {
  constructor(
    private readonly pitr: PitrService,
    private readonly restores: PitrRestores,
  ) {}

  @MessagePattern(PITR_PATTERNS.config)
  config(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.getConfig(ctx, databaseRefOf(body));
  }

  @MessagePattern(PITR_PATTERNS.enable)
  enable(@MessageCtx() ctx: RequestContext, @MessageBody() body: EnablePitrMessage) {
    return this.pitr.enable(ctx, databaseRefOf(body), body.retention_days);
  }

  @MessagePattern(PITR_PATTERNS.disable)
  disable(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.disable(ctx, databaseRefOf(body));
  }

  @MessagePattern(PITR_PATTERNS.wal)
  wal(@MessageCtx() ctx: RequestContext, @MessageBody() body: WalPageMessage) {
    return this.pitr.wal(ctx, databaseRefOf(body), {
      ...(body.limit === undefined ? {} : { limit: body.limit }),
      ...(body.cursor === undefined ? {} : { cursor: body.cursor }),
    });
  }

  @MessagePattern(PITR_PATTERNS.recoveryWindow)
  recoveryWindow(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.recoveryWindow(ctx, databaseRefOf(body));
  }

  @MessagePattern(PITR_PATTERNS.receiverStatus)
  receiverStatus(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.receiverStatus(ctx, databaseRefOf(body));
  }

  @MessagePattern(PITR_PATTERNS.restartReceiver)
  restartReceiver(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.pitr.restartReceiver(ctx, databaseRefOf(body));
  }

  @MessagePattern(PITR_PATTERNS.restore)
  restore(@MessageCtx() ctx: RequestContext, @MessageBody() body: PitrRestoreMessage) {
    return this.restores.restore(ctx, databaseRefOf(body), {
      target_time: body.target_time,
      ...(body.target_database == null ? {} : { target_database: body.target_database }),
    });
  }

  @MessagePattern(PITR_PATTERNS.restorePlan)
  restorePlan(@MessageCtx() ctx: RequestContext, @MessageBody() body: PitrPlanRequest) {
    return this.restores.plan(ctx, body);
  }

  @MessagePattern(PITR_PATTERNS.pauseForRestore)
  pauseForRestore(@MessageBody() body: DatabaseIdRef) {
    return this.restores.pauseForRestore(String(body.database_id));
  }

  @MessagePattern(PITR_PATTERNS.resumeAfterRestore)
  resumeAfterRestore(@MessageBody() body: DatabaseIdRef) {
    return this.restores.resumeAfterRestore(String(body.database_id));
  }

  @MessagePattern(PITR_PATTERNS.backupsInUse)
  backupsInUse(@MessageBody() body: { database_ids: string[] }) {
    const ids = Array.isArray(body.database_ids) ? body.database_ids.map(String) : [];
    return this.pitr.backupsInUse(ids);
  }

  @MessagePattern(PITR_PATTERNS.deleteForDatabase)
  deleteForDatabase(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseIdRef) {
    return this.pitr.deleteForDatabase(ctx, String(body.database_id));
  }
}

function databaseRefOf(body: DatabaseRef): DatabaseRef {
  return { project_id: String(body.project_id), name: String(body.name) };
}
