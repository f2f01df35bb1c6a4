import { Controller, Get, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import { DRILL_PATTERNS, Drill, DrillList } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import { IDEMPOTENT_ROUTE_ERRORS, Idempotent } from '../idempotency/idempotent.decorator.js';
import {
  ApiEnvelope,
  ApiErrors,
  DATABASE_ROUTE_ERRORS,
} from '../openapi/api-envelope.decorator.js';

/** Restore drills: a database's backups proven restorable (docs/api/drills.md). */
@ApiTags('drills')
@ApiBearerAuth()
@ApiParam({ name: 'project_id', type: String, example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
@ApiParam({ name: 'name', type: String, example: 'orders' })
@Controller('projects/:project_id/databases/:name/drills')
export class DrillsController {
  constructor(private readonly rpc: RpcClient) {}

  @Post()
  @Idempotent(201)
  @ApiOperation({
    operationId: 'createDrill',
    summary: 'Run a restore drill now',
    description:
      "Answers at once with status `pending`. The database's newest backup (with PITR: and its archive, to the moment of the request) is restored into a scratch server no client can reach, checked (`consistent`, `amcheck`, with PITR `target_reached` and `wal_chain`) and removed; the drill ends `passed` or `failed`. The database itself is not touched. One at a time per database; Free 3, Pro 20 a day.",
  })
  @ApiEnvelope(Drill, { status: 201, description: 'The new drill, pending.' })
  @ApiErrors(
    ...DATABASE_ROUTE_ERRORS,
    'QUOTA_EXCEEDED',
    'DATABASE_NOT_READY',
    'OPERATION_IN_PROGRESS',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  create(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<Drill> {
    return this.rpc.call(DRILL_PATTERNS.create, ctx, { project_id: projectId, name });
  }

  @Get()
  @ApiOperation({
    operationId: 'listDrills',
    summary: 'List the drills of a database, newest first',
  })
  @ApiEnvelope(DrillList, { status: 200, description: 'Every drill of the database.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  list(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<DrillList> {
    return this.rpc.call(DRILL_PATTERNS.list, ctx, { project_id: projectId, name });
  }

  @Get(':drill_id')
  @ApiParam({ name: 'drill_id', type: String, example: 'drl_k3v9x0q2m8t4b7w1c5zd' })
  @ApiOperation({ operationId: 'getDrill', summary: 'Show a drill and its checks' })
  @ApiEnvelope(Drill, { status: 200, description: 'The drill.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'DRILL_NOT_FOUND')
  get(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
    @Param('drill_id') drillId: string,
  ): Promise<Drill> {
    return this.rpc.call(DRILL_PATTERNS.get, ctx, {
      project_id: projectId,
      name,
      drill_id: drillId,
    });
  }
}
