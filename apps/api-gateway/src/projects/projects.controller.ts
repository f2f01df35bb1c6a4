import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import {
  CreateProjectDto,
  Deleted,
  DeleteProjectQueryDto,
  PROJECT_PATTERNS,
  Project,
  ProjectDetail,
  ProjectList,
  RegionList,
} from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import { IDEMPOTENT_ROUTE_ERRORS, Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiEnvelope, ApiErrors } from '../openapi/api-envelope.decorator.js';

const ApiProjectId = (): MethodDecorator =>
  ApiParam({
    name: 'id',
    type: String,
    description: 'A project id (`proj_` and 20 characters of [0-9a-z]).',
    example: 'proj_k3v9x0q2m8t4b7w1c5zd',
  });

/** Projects of the signed-in account. */
@ApiTags('projects')
@ApiBearerAuth()
@Controller('projects')
export class ProjectsController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @ApiOperation({ operationId: 'listProjects', summary: 'List the projects of the account' })
  @ApiEnvelope(ProjectList, { status: 200, description: 'Every project of the account.' })
  @ApiErrors('AUTH_REQUIRED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  list(@Ctx() ctx: RequestContext): Promise<ProjectList> {
    return this.rpc.call(PROJECT_PATTERNS.list, ctx, {});
  }

  @Post()
  @Idempotent(201)
  @ApiOperation({ operationId: 'createProject', summary: 'Create a project' })
  @ApiEnvelope(Project, { status: 201, description: 'The new project.' })
  @ApiErrors(
    'VALIDATION_ERROR',
    'AUTH_REQUIRED',
    'QUOTA_EXCEEDED',
    'PROJECT_NAME_TAKEN',
    'PAYLOAD_TOO_LARGE',
    'RATE_LIMIT_EXCEEDED',
    'SERVICE_UNAVAILABLE',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  create(@Ctx() ctx: RequestContext, @Body() body: CreateProjectDto): Promise<Project> {
    return this.rpc.call(PROJECT_PATTERNS.create, ctx, body);
  }

  @Get(':id')
  @ApiProjectId()
  @ApiOperation({ operationId: 'getProject', summary: 'Show a project' })
  @ApiEnvelope(ProjectDetail, { status: 200, description: 'The project.' })
  @ApiErrors('AUTH_REQUIRED', 'PROJECT_NOT_FOUND', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  get(@Ctx() ctx: RequestContext, @Param('id') id: string): Promise<ProjectDetail> {
    return this.rpc.call(PROJECT_PATTERNS.get, ctx, {
      id,
    });
  }

  @Delete(':id')
  @ApiProjectId()
  @ApiOperation({
    operationId: 'deleteProject',
    summary: 'Delete a project',
    description:
      'Refused while the project has databases, unless `force=true`: then its databases ' +
      'go with it, and their servers and backups are removed in the background.',
  })
  @ApiEnvelope(Deleted, { status: 200, description: 'The project is gone.' })
  @ApiErrors(
    'VALIDATION_ERROR',
    'AUTH_REQUIRED',
    'PROJECT_NOT_FOUND',
    'PROJECT_NOT_EMPTY',
    'RATE_LIMIT_EXCEEDED',
    'SERVICE_UNAVAILABLE',
  )
  delete(
    @Ctx() ctx: RequestContext,
    @Param('id') id: string,
    @Query() query: DeleteProjectQueryDto,
  ): Promise<Deleted> {
    return this.rpc.call(PROJECT_PATTERNS.delete, ctx, {
      id,
      force: query.force ?? false,
    });
  }
}

/** The deployment's regions. */
@ApiTags('regions')
@ApiBearerAuth()
@Controller('regions')
export class RegionsController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @ApiOperation({ operationId: 'listRegions', summary: 'List the regions of the deployment' })
  @ApiEnvelope(RegionList, { status: 200, description: 'The regions, default first.' })
  @ApiErrors('AUTH_REQUIRED', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  list(@Ctx() ctx: RequestContext): Promise<RegionList> {
    return this.rpc.call(PROJECT_PATTERNS.regions, ctx, {});
  }
}
