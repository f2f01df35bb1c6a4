import { Controller } from '@nestjs/common';
import { DRILL_PATTERNS, DatabaseRef, DrillRef, RequestContext } from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
import { DrillsService } from './drills.service.js';

/** Restore drill message handlers of database-provisioner. */
@Controller()
export class DrillsController {
  constructor(private readonly drills: DrillsService) {}

  @Handles(DRILL_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.drills.create(ctx, { project_id: body.project_id, name: body.name });
  }

  @Handles(DRILL_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.drills.list(ctx, { project_id: body.project_id, name: body.name });
  }

  @Handles(DRILL_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: DrillRef) {
    const { project_id, name, drill_id } = body;
    return this.drills.get(ctx, { project_id, name, drill_id });
  }
}
