import { Controller } from '@nestjs/common';
import {
  CheckRestoreRequest,
  CreateRestoreRequest,
  RESTORE_PATTERNS,
  RequestContext,
  RestoreGetRequest,
  RestoreListRequest,
} from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
import { RestoresService } from './restores.service.js';

/** Restore message handlers of database-provisioner. */
@Controller()
export class RestoresController {
  constructor(private readonly restores: RestoresService) {}

  @Handles(RESTORE_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: CreateRestoreRequest) {
    return this.restores.create(ctx, body);
  }

  @Handles(RESTORE_PATTERNS.check)
  check(@MessageCtx() ctx: RequestContext, @MessageBody() body: CheckRestoreRequest) {
    return this.restores.check(ctx, body);
  }

  @Handles(RESTORE_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext, @MessageBody() body: RestoreListRequest) {
    return this.restores.list(ctx, { project_id: body.project_id, name: body.name }, body.kind);
  }

  @Handles(RESTORE_PATTERNS.cancel)
  cancel(@MessageCtx() ctx: RequestContext, @MessageBody() body: RestoreGetRequest) {
    const { project_id, name, restore_id } = body;
    return this.restores.cancel(ctx, { project_id, name, restore_id }, body.kind);
  }

  @Handles(RESTORE_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: RestoreGetRequest) {
    const { project_id, name, restore_id } = body;
    return this.restores.get(ctx, { project_id, name, restore_id }, body.kind);
  }
}
