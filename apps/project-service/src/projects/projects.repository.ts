import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { RequestContext } from '@pgcloud/contracts';
import { PROJECT_EVENTS } from '@pgcloud/contracts';
import { Outbox } from '@pgcloud/messaging';
import type { PreparedStatement } from '@pgcloud/postgres';
import { queryPrepared, queryRows } from '@pgcloud/postgres';
import { DataSource } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { ProjectEntity } from './project.entity.js';

const LIST_PROJECTS: PreparedStatement = {
  name: 'projects.list',
  text: `SELECT id, name, default_region, created_at FROM projects.projects
          WHERE owner_id = $1 ORDER BY created_at, id`,
};

/** A row of projects.projects as `listOwned` selects it. */
export interface ProjectRow {
  id: string;
  name: string;
  default_region: string;
  created_at: Date;
}

/** project-service's tables: projects, the databases each holds, and its outbox. */
@Injectable()
export class ProjectsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: Outbox,
  ) {}

  /**
   * Inserts the project and its `project.created` event once `allowed` (told how many
   * projects the owner has) has not thrown. One account's creates take turns, so two at
   * once cannot both pass its quota; a name the owner has already is a unique violation.
   */
  async insert(
    ctx: RequestContext,
    project: Pick<ProjectEntity, 'id' | 'ownerId' | 'name' | 'defaultRegion'>,
    allowed: (owned: number) => void,
  ): Promise<ProjectEntity> {
    await this.dataSource.transaction(async (manager) => {
      // The two-key form keeps this lock apart from other services' one-key locks.
      await manager.query(
        "SELECT pg_advisory_xact_lock(hashtext('projects.per-owner'), hashtext($1))",
        [project.ownerId],
      );
      allowed(await manager.countBy(ProjectEntity, { ownerId: project.ownerId }));
      await manager.insert(ProjectEntity, project);
      await this.outbox.add(manager, PROJECT_EVENTS.created, ctx, {
        project_id: project.id,
        owner_id: project.ownerId,
      });
    });
    return this.dataSource.manager.findOneByOrFail(ProjectEntity, { id: project.id });
  }

  /**
   * The owner's projects, oldest first. Every CLI command that names its project by name
   * asks this first, so it is a prepared statement: TypeORM's `find` took a tenth of this
   * service's CPU under load, and parsing and planning the query each time half of
   * PostgreSQL's (bench/results/2026-11-27-api-latency.md and 2026-11-27-api-latency-3.md).
   */
  listOwned(ownerId: string): Promise<ProjectRow[]> {
    return queryPrepared<ProjectRow>(this.dataSource, LIST_PROJECTS, [ownerId]);
  }

  findOwned(id: string, ownerId: string): Promise<ProjectEntity | null> {
    return this.dataSource.manager.findOneBy(ProjectEntity, { id, ownerId });
  }

  /** Deletes the project with its `project.deleted` event; false when it was gone already. */
  async delete(ctx: RequestContext, project: ProjectEntity): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const gone = await manager.delete(ProjectEntity, {
        id: project.id,
        ownerId: project.ownerId,
      });
      if (gone.affected !== 1) return false;
      await this.outbox.add(manager, PROJECT_EVENTS.deleted, ctx, {
        project_id: project.id,
        owner_id: project.ownerId,
      });
      return true;
    });
  }

  /** The project's databases that are not deleted. */
  async countDatabases(projectId: string): Promise<number> {
    const [row] = await queryRows<{ count: number }>(
      this.dataSource,
      `SELECT count(*)::int AS count FROM projects.project_databases
        WHERE project_id = $1 AND NOT deleted`,
      [projectId],
    );
    return row?.count ?? 0;
  }

  /**
   * Records a database of the project, or its deletion, in an event handler's transaction.
   * A delete wins whatever the order the two events are handled in.
   */
  async recordDatabase(
    manager: EntityManager,
    { databaseId, projectId, deleted }: { databaseId: string; projectId: string; deleted: boolean },
  ): Promise<void> {
    await manager.query(
      `INSERT INTO projects.project_databases (database_id, project_id, deleted)
       VALUES ($1, $2, $3)
       ON CONFLICT (database_id) DO UPDATE SET deleted = project_databases.deleted OR $3`,
      [databaseId, projectId, deleted],
    );
  }
}
