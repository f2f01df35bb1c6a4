import { Controller } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type { DeleteProjectRequest, ProjectIdRequest, Region } from '@pgcloud/contracts';
import { CreateProjectDto, PROJECT_PATTERNS, RequestContext } from '@pgcloud/contracts';
import { MessageBody, MessageCtx } from '@pgcloud/messaging';
import { RegionsService } from '../regions/regions.service.js';
import { ProjectsService } from './projects.service.js';

/** Message handlers of project-service. */
@Controller()
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly regions: RegionsService,
  ) {}

  @MessagePattern(PROJECT_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() dto: CreateProjectDto) {
    return this.projects.create(ctx, dto);
  }

  @MessagePattern(PROJECT_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext) {
    return this.projects.list(ctx);
  }

  @MessagePattern(PROJECT_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectIdRequest) {
    return this.projects.get(ctx, String(body.id));
  }

  @MessagePattern(PROJECT_PATTERNS.check)
  check(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectIdRequest) {
    return this.projects.check(ctx, String(body.id));
  }

  @MessagePattern(PROJECT_PATTERNS.delete)
  delete(@MessageCtx() ctx: RequestContext, @MessageBody() body: DeleteProjectRequest) {
    return this.projects.delete(ctx, String(body.id), body.force === true);
  }

  @MessagePattern(PROJECT_PATTERNS.regions)
  listRegions(): { regions: Region[] } {
    return { regions: this.regions.list() };
  }
}
