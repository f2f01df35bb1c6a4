import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import type {
  Deleted,
  DeleteProjectRequest,
  Project,
  ProjectDetail,
  ProjectIdRequest,
  Region,
  RequestContext,
} from '@pgcloud/contracts';
import { CreateProjectDto, DeleteProjectQueryDto, PROJECT_PATTERNS } from '@pgcloud/contracts';
import { ServiceClients } from '../clients/service-clients.js';
import { Ctx } from '../http/request-context.js';

/** Projects of the signed-in account. */
@Controller('projects')
export class ProjectsController {
  constructor(private readonly clients: ServiceClients) {}

  @Get()
  list(@Ctx() ctx: RequestContext): Promise<{ projects: Project[] }> {
    return this.clients.projects.send(PROJECT_PATTERNS.list, ctx, {});
  }

  @Post()
  create(@Ctx() ctx: RequestContext, @Body() body: CreateProjectDto): Promise<Project> {
    return this.clients.projects.send(PROJECT_PATTERNS.create, ctx, body);
  }

  @Get(':id')
  get(@Ctx() ctx: RequestContext, @Param('id') id: string): Promise<ProjectDetail> {
    return this.clients.projects.send<ProjectDetail, ProjectIdRequest>(PROJECT_PATTERNS.get, ctx, {
      id,
    });
  }

  @Delete(':id')
  delete(
    @Ctx() ctx: RequestContext,
    @Param('id') id: string,
    @Query() query: DeleteProjectQueryDto,
  ): Promise<Deleted> {
    return this.clients.projects.send<Deleted, DeleteProjectRequest>(PROJECT_PATTERNS.delete, ctx, {
      id,
      force: query.force ?? false,
    });
  }
}

/** The deployment's regions. */
@Controller('regions')
export class RegionsController {
  constructor(private readonly clients: ServiceClients) {}

  @Get()
  list(@Ctx() ctx: RequestContext): Promise<{ regions: Region[] }> {
    return this.clients.projects.send(PROJECT_PATTERNS.regions, ctx, {});
  }
}
