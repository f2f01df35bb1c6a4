import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type {
  CreateProjectDto,
  Deleted,
  Project,
  ProjectDetail,
  RequestContext,
} from '@pgcloud/contracts';
import { DomainError, PROJECT_EVENTS, isId, newId } from '@pgcloud/contracts';
import { Outbox, assertTierQuota, assertTimeLeft, requireUser } from '@pgcloud/messaging';
import type { PreparedStatement } from '@pgcloud/postgres';
import { isUniqueViolation, queryPrepared } from '@pgcloud/postgres';
import { DataSource, Repository } from 'typeorm';
import { ProjectServiceConfig } from '../config.js';
import { RegionsService } from '../regions/regions.service.js';
import { ProjectDatabases } from './project-databases.js';
import { ProjectEntity } from './project.entity.js';

const LIST_PROJECTS: PreparedStatement = {
  name: 'projects.list',
  text: `SELECT id, name, default_region, created_at FROM projects.projects
          WHERE owner_id = $1 ORDER BY created_at, id`,
};

/** Projects of an account: names, default region, delete. */
@Injectable()
export class ProjectsService {
  private readonly logger = new Logger(ProjectsService.name);

  constructor(
    @InjectRepository(ProjectEntity) private readonly projects: Repository<ProjectEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly regions: RegionsService,
    private readonly outbox: Outbox,
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
    const project = this.projects.create({
      id: newId('proj'),
      ownerId,
      name: dto.name,
      defaultRegion: region,
    });
    try {
      await this.dataSource.transaction(async (manager) => {
        // One account's creates take turns, so two at once cannot both pass the quota.
        // The two-key form keeps this lock apart from other services' one-key locks.
        await manager.query(
          "SELECT pg_advisory_xact_lock(hashtext('projects.per-owner'), hashtext($1))",
          [ownerId],
        );
        // Quota (403) comes before a duplicate name (409): docs/api/errors.md#the-order-of-checks.
        const owned = await manager.countBy(ProjectEntity, { ownerId });
        assertTierQuota(
          ctx.tier,
          owned,
          this.config.projectLimits,
          'projects per account',
          'delete one to make room',
        );
        // Not after the caller has answered 503 (the lock above may have kept us waiting).
        assertTimeLeft(ctx);
        await manager.insert(ProjectEntity, project);
        await this.outbox.add(manager, PROJECT_EVENTS.created, ctx, {
          project_id: project.id,
          owner_id: ownerId,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new DomainError(
          'PROJECT_NAME_TAKEN',
          `You already have a project named "${dto.name}".`,
        );
      throw err;
    }
    const saved = await this.projects.findOneByOrFail({ id: project.id });
    this.logger.log(`project ${saved.id} created for ${ownerId}`);
    return toProject(saved);
  }

  /**
   * The caller's projects, oldest first. Every CLI command that names its project by name
   * asks this first, so it is a prepared statement: TypeORM's `find` took a tenth of this
   * service's CPU under load, and parsing and planning the query each time half of
   * PostgreSQL's (bench/results/2026-11-27-api-latency.md and 2026-11-27-api-latency-3.md).
   */
  async list(ctx: RequestContext): Promise<{ projects: Project[] }> {
    const rows = await queryPrepared<ProjectRow>(this.dataSource, LIST_PROJECTS, [
      requireUser(ctx),
    ]);
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
    await this.dataSource.transaction(async (manager) => {
      const gone = await manager.delete(ProjectEntity, {
        id: project.id,
        ownerId: project.ownerId,
      });
      // A delete that raced another finds nothing left to announce.
      if (gone.affected !== 1) return;
      await this.outbox.add(manager, PROJECT_EVENTS.deleted, ctx, {
        project_id: project.id,
        owner_id: project.ownerId,
      });
    });
    this.logger.log(`project ${project.id} deleted`);
    return { id: project.id, deleted: true };
  }

  private async findOwned(ctx: RequestContext, id: string): Promise<ProjectEntity> {
    const ownerId = requireUser(ctx);
    const project = isId('proj', id) ? await this.projects.findOneBy({ id, ownerId }) : null;
    if (!project) throw new DomainError('PROJECT_NOT_FOUND', `Project ${id} was not found.`);
    return project;
  }
}

/** A row of projects.projects as `list` selects it. */
interface ProjectRow {
  id: string;
  name: string;
  default_region: string;
  created_at: Date;
}

function toProject(entity: ProjectEntity): Project {
  return {
    id: entity.id,
    name: entity.name,
    default_region: entity.defaultRegion,
    created_at: entity.createdAt.toISOString(),
  };
}
