import { Injectable } from '@nestjs/common';
import type { OnModuleInit } from '@nestjs/common';
import type { DatabaseEvent } from '@pgcloud/contracts';
import { DATABASE_EVENTS } from '@pgcloud/contracts';
import type { EventDelivery } from '@pgcloud/messaging';
import { EventSubscriber } from '@pgcloud/messaging';
import { ProjectsRepository } from './projects.repository.js';

/**
 * How many databases each project holds, kept from the provisioner's database.created and
 * database.deleted events: project-service never calls the provisioner (calls point one
 * way, from the provisioner to here). The count follows a create or a delete within the
 * time an event takes to arrive, a few milliseconds.
 */
@Injectable()
export class ProjectDatabases implements OnModuleInit {
  constructor(
    private readonly repository: ProjectsRepository,
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
  count(projectId: string): Promise<number> {
    return this.repository.countDatabases(projectId);
  }

  private record(
    { database_id: databaseId, project_id: projectId }: DatabaseEvent,
    { manager }: EventDelivery,
    deleted: boolean,
  ): Promise<void> {
    return this.repository.recordDatabase(manager, { databaseId, projectId, deleted });
  }
}
