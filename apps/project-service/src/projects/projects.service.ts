import { Injectable, Logger } from '@nestjs/common';
import type {
  CreateProjectDto,
  Deleted,
  Project,
  ProjectDetail,
  RequestContext,
} from '@pgcloud/contracts';
import { DomainError, isId, newId } from '@pgcloud/contracts';
import { assertTierQuota, assertTimeLeft, requireUser } from '@pgcloud/messaging';
import { isUniqueViolation } from '@pgcloud/postgres';
import { ProjectServiceConfig } from '../config.js';
import { RegionsService } from '../regions/regions.service.js';
import { ProjectDatabases } from './project-databases.js';
import type { ProjectEntity } from './project.entity.js';
import { ProjectsRepository } from './projects.repository.js';

/** Projects of an account: names, default region, delete. */
@Injectable()
export class ProjectsService {
  private readonly logger = new Logger(ProjectsService.name);

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly regions: RegionsService,
    private readonly databases: ProjectDatabases,
    private readonly config: ProjectServiceConfig,
  ) {}

  async create(ctx: RequestContext, dto: CreateProjectDto): Promise<Project> {
    const ownerId = requireUser(ctx);
    const region = dto.default_region ?? this.regions.defaultRegion().id;
    if (!this.regions.has(region)) {
      throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
        {
          field: 'default_region',
          message: `default_region must be one of: ${this.regions
            .list()
            .map((r) => r.id)
            .join(', ')}`,
        },
      ]);
    }
    const project = { id: newId('proj'), ownerId, name: dto.name, defaultRegion: region };
    let saved: ProjectEntity;
    try {
      saved = await this.projects.insert(ctx, project, (owned) => {
        // Quota (403) comes before a duplicate name (409): docs/api/errors.md#the-order-of-checks.
        assertTierQuota(
          ctx.tier,
          owned,
          this.config.projectLimits,
          'projects per account',
          'delete one to make room',
        );
        // Not after the caller has answered 503 (the owner's turn may have kept us waiting).
        assertTimeLeft(ctx);
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new DomainError(
          'PROJECT_NAME_TAKEN',
          `You already have a project named "${dto.name}".`,
        );
      throw err;
    }
    this.logger.log(`project ${saved.id} created for ${ownerId}`);
    return toProject(saved);
  }

  /** The caller's projects, oldest first. */
  async list(ctx: RequestContext): Promise<{ projects: Project[] }> {
    const rows = await this.projects.listOwned(requireUser(ctx));
    return {
      projects: rows.map((row) => ({
        id: row.id,
        name: row.name,
        default_region: row.default_region,
        created_at: row.created_at.toISOString(),
      })),
    };
  }

  async get(ctx: RequestContext, id: string): Promise<ProjectDetail> {
    const project = await this.findOwned(ctx, id);
    return { ...toProject(project), database_count: await this.databases.count(project.id) };
  }

  /** The caller's project without counts: how other services check ownership. */
  async check(ctx: RequestContext, id: string): Promise<Project> {
    return toProject(await this.findOwned(ctx, id));
  }

  async delete(ctx: RequestContext, id: string, force = false): Promise<Deleted> {
    const project = await this.findOwned(ctx, id);
    // With force, the provisioner removes the project's databases on project.deleted.
    if (!force && (await this.databases.count(project.id)) > 0) {
      throw new DomainError(
        'PROJECT_NOT_EMPTY',
        `Project ${project.name} still has databases; delete them first or use ?force=true.`,
      );
    }
    // A delete that raced another finds nothing left to announce.
    await this.projects.delete(ctx, project);
    this.logger.log(`project ${project.id} deleted`);
    return { id: project.id, deleted: true };
  }

  private async findOwned(ctx: RequestContext, id: string): Promise<ProjectEntity> {
    const ownerId = requireUser(ctx);
    const project = isId('proj', id) ? await this.projects.findOwned(id, ownerId) : null;
    if (!project) throw new DomainError('PROJECT_NOT_FOUND', `Project ${id} was not found.`);
    return project;
  }
}

function toProject(entity: ProjectEntity): Project {
  return {
    id: entity.id,
    name: entity.name,
    default_region: entity.defaultRegion,
    created_at: entity.createdAt.toISOString(),
  };
}
