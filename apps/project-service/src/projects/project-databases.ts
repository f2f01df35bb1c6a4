import { Injectable } from '@nestjs/common';
import type { OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DatabaseEvent } from '@pgcloud/contracts';
import { DATABASE_EVENTS } from '@pgcloud/contracts';
import type { EventDelivery } from '@pgcloud/messaging';
import { EventSubscriber } from '@pgcloud/messaging';
import { queryRows } from '@pgcloud/postgres';
import { DataSource } from 'typeorm';

/**
 * How many databases each project holds, kept from the provisioner's database.created and
 * database.deleted events: project-service never calls the provisioner (calls point one
 * way, from the provisioner to here). The count follows a create or a delete within the
 * time an event takes to arrive, a few milliseconds.
 */
@Injectable()
export class ProjectDatabases implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly subscriber: EventSubscriber,
  ) {}

  onModuleInit(): void {
    this.subscriber.on(DATABASE_EVENTS.created, (payload, delivery) =>
      this.record(payload, delivery, false),
    );
    this.subscriber.on(DATABASE_EVENTS.deleted, (payload, delivery) =>
      this.record(payload, delivery, true),
    );
  }

  /** The project's databases that are not deleted. */
  async count(projectId: string): Promise<number> {
    const [row] = await queryRows<{ count: number }>(
      this.dataSource,
      `SELECT count(*)::int AS count FROM projects.project_databases
        WHERE project_id = $1 AND NOT deleted`,
      [projectId],
    );
    return row?.count ?? 0;
  }

  private async record(
    { database_id: databaseId, project_id: projectId }: DatabaseEvent,
    { manager }: EventDelivery,
    deleted: boolean,
  ): Promise<void> {
    // A delete wins whatever the order the two events are handled in.
    await manager.query(
      `INSERT INTO projects.project_databases (database_id, project_id, deleted)
       VALUES ($1, $2, $3)
       ON CONFLICT (database_id) DO UPDATE SET deleted = project_databases.deleted OR $3`,
      [databaseId, projectId, deleted],
    );
  }
}
