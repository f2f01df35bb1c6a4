import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import {
  HealthController,
  SERVICE_NAME,
  eventSubscriberProvider,
  outboxProviders,
} from '@pgcloud/messaging';
import { metadataTypeOrmModule } from '@pgcloud/postgres';
import { ProjectServiceConfig } from './config.js';
import { CreateProjects1763770000000 } from './migrations/1763770000000-create-projects.js';
import { ProjectEntity } from './projects/project.entity.js';
import { ProjectsController } from './projects/projects.controller.js';
import { ProjectsRepository } from './projects/projects.repository.js';
import { ProjectsService } from './projects/projects.service.js';
import { RegionsService } from './regions/regions.service.js';
import { EventTables1764200000000 } from './migrations/1764200000000-event-tables.js';
import { ProjectDatabases1764300000000 } from './migrations/1764300000000-project-databases.js';
import { ProjectDatabases } from './projects/project-databases.js';

export const PROJECTS_SCHEMA = 'projects';

/** project-service: projects and regions. */
@Module({})
export class AppModule {
  static forRoot(config: ProjectServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        metadataTypeOrmModule({
          databaseUrl: config.DATABASE_URL,
          schema: PROJECTS_SCHEMA,
          entities: [ProjectEntity],
          migrations: [
            CreateProjects1763770000000,
            EventTables1764200000000,
            ProjectDatabases1764300000000,
          ],
        }),
      ],
      controllers: [ProjectsController, HealthController],
      providers: [
        { provide: ProjectServiceConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'project-service' },
        ...outboxProviders(config),
        eventSubscriberProvider(config, 'projects'),
        ProjectDatabases,
        RegionsService,
        ProjectsRepository,
        ProjectsService,
      ],
    };
  }
}
