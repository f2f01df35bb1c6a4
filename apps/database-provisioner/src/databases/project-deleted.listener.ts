import { Injectable, Logger } from '@nestjs/common';
import type { OnModuleInit } from '@nestjs/common';
import type { ProjectEvent } from '@pgcloud/contracts';
import { PROJECT_EVENTS } from '@pgcloud/contracts';
import type { EventDelivery } from '@pgcloud/messaging';
import { EventSubscriber } from '@pgcloud/messaging';
import { DatabaseJobs } from './database.jobs.js';
import { DatabasesRepository } from './databases.repository.js';

/**
 * A deleted project's databases go with it: on project.deleted, every database of the
 * project leaves the API and its removal is queued, and the project is remembered as
 * deleted so a create that raced the delete is refused (see DatabasesRepository).
 */
@Injectable()
export class ProjectDeletedListener implements OnModuleInit {
  private readonly logger = new Logger(ProjectDeletedListener.name);

  constructor(
    private readonly subscriber: EventSubscriber,
    private readonly jobs: DatabaseJobs,
    private readonly databases: DatabasesRepository,
  ) {}

  onModuleInit(): void {
    this.subscriber.on(PROJECT_EVENTS.deleted, (payload, delivery) =>
      this.removeDatabasesOf(payload, delivery),
    );
  }

  private async removeDatabasesOf(
    { project_id: projectId }: ProjectEvent,
    { ctx, manager }: EventDelivery,
  ): Promise<void> {
    await this.databases.lockProject(manager, projectId);
    await this.databases.recordProjectDeleted(manager, projectId);
    const ids = await this.databases.idsInProject(manager, projectId);
    await this.jobs.markForRemoval(manager, ctx, ids);
    this.logger.log(`project ${projectId} deleted: removing ${ids.length} database(s)`);
  }
}
