import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import { RESTORE_PATTERNS, Restore, RestoreList, RestoreRef } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import {
  ApiEnvelope,
  ApiErrors,
  DATABASE_ROUTE_ERRORS,
} from '../openapi/api-envelope.decorator.js';

/** Every restore of a database (as source), backup and PITR alike. */
@ApiTags('restores')
@ApiBearerAuth()
@ApiParam({ name: 'project_id', type: String, example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
@ApiParam({ name: 'name', type: String, example: 'orders' })
@Controller('projects/:project_id/databases/:name/restores')
export class RestoresController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @ApiOperation({
    operationId: 'listRestores',
    summary: 'List the restores of a database, newest first',
  })
  @ApiEnvelope(RestoreList, { status: 200, description: 'Every restore of the database.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  list(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<RestoreList> {
    return this.rpc.call(RESTORE_PATTERNS.list, ctx, { project_id: projectId, name });
  }

  @Get(':restore_id')
  @ApiParam({ name: 'restore_id', type: String, example: 'rstr_k3v9x0q2m8t4b7w1c5zd' })
  @ApiOperation({ operationId: 'getRestore', summary: 'Show a restore' })
  @ApiEnvelope(Restore, { status: 200, description: 'The restore.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'RESTORE_NOT_FOUND')
  get(@Ctx() ctx: RequestContext, @Param() ref: RestoreRef): Promise<Restore> {
    return this.rpc.call(RESTORE_PATTERNS.get, ctx, {
      project_id: ref.project_id,
      name: ref.name,
      restore_id: ref.restore_id,
    });
  }

  @Post(':restore_id/cancel')
  @HttpCode(200)
  @ApiParam({ name: 'restore_id', type: String, example: 'rstr_k3v9x0q2m8t4b7w1c5zd' })
  @ApiOperation({
    operationId: 'cancelRestore',
    summary: 'Cancel a restore',
    description:
      'Stops a restore before it swaps the restored data in: the source stays as it was, writable; a database made for it is removed; the restore ends `cancelled`. The answer is the restore once it stopped (or still stopping, when that takes longer than the request may wait). From `swapping` on, or once it ended: 409 RESTORE_NOT_CANCELLABLE.',
  })
  @ApiEnvelope(Restore, { status: 200, description: 'The restore.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'RESTORE_NOT_FOUND', 'RESTORE_NOT_CANCELLABLE')
  cancel(@Ctx() ctx: RequestContext, @Param() ref: RestoreRef): Promise<Restore> {
    return this.rpc.call(RESTORE_PATTERNS.cancel, ctx, {
      project_id: ref.project_id,
      name: ref.name,
      restore_id: ref.restore_id,
    });
  }
}
