import { Controller } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type {
  CreateRestoreRequest,
  DatabaseRef,
  RestoreKind,
  RestoreRef,
} from '@pgcloud/contracts';
import { RESTORE_PATTERNS, RequestContext } from '@pgcloud/contracts';
import { MessageBody, MessageCtx } from '@pgcloud/messaging';
import { RestoresService } from './restores.service.js';

/** Restore message handlers of database-provisioner. */
@Controller()
export class RestoresController {
  constructor(private readonly restores: RestoresService) {}

  @MessagePattern(RESTORE_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: CreateRestoreRequest) {
    return this.restores.create(ctx, {
      project_id: String(body.project_id),
      name: String(body.name),
      kind: body.kind === 'pitr' ? 'pitr' : 'backup',
      ...(body.backup_id === undefined ? {} : { backup_id: String(body.backup_id) }),
      ...(body.target_time === undefined ? {} : { target_time: String(body.target_time) }),
      ...(body.target_database === undefined
        ? {}
        : { target_database: String(body.target_database) }),
    });
  }

  @MessagePattern(RESTORE_PATTERNS.list)
  list(
    @MessageCtx() ctx: RequestContext,
    @MessageBody() body: DatabaseRef & { kind?: RestoreKind },
  ) {
    return this.restores.list(
      ctx,
      { project_id: String(body.project_id), name: String(body.name) },
      kindOf(body.kind),
    );
  }

  @MessagePattern(RESTORE_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: RestoreRef & { kind?: RestoreKind }) {
    return this.restores.get(
      ctx,
      {
        project_id: String(body.project_id),
        name: String(body.name),
        restore_id: String(body.restore_id),
      },
      kindOf(body.kind),
    );
  }
}

/** The PITR routes list and show only PITR restores. */
function kindOf(kind: unknown): RestoreKind | undefined {
  return kind === 'pitr' || kind === 'backup' ? kind : undefined;
}
