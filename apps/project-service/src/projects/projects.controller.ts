import { Controller } from '@nestjs/common';
import type { Region } from '@pgcloud/contracts';
import {
  CreateProjectDto,
  DeleteProjectRequest,
  PROJECT_PATTERNS,
  ProjectIdRequest,
  RequestContext,
} from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
import { RegionsService } from '../regions/regions.service.js';
import { ProjectsService } from './projects.service.js';

/** Message handlers of project-service. */
@Controller()
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly regions: RegionsService,
  ) {}

  @Handles(PROJECT_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() dto: CreateProjectDto) {
    return this.projects.create(ctx, dto);
  }

  @Handles(PROJECT_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext) {
    return this.projects.list(ctx);
  }

  @Handles(PROJECT_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectIdRequest) {
    return this.projects.get(ctx, body.id);
  }

  @Handles(PROJECT_PATTERNS.check)
  check(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectIdRequest) {
    return this.projects.check(ctx, body.id);
  }

  @Handles(PROJECT_PATTERNS.delete)
  delete(@MessageCtx() ctx: RequestContext, @MessageBody() body: DeleteProjectRequest) {
    return this.projects.delete(ctx, body.id, body.force === true);
  }

  @Handles(PROJECT_PATTERNS.regions)
  listRegions(): { regions: Region[] } {
    return { regions: this.regions.list() };
  }
}
