import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import { EventPublisher, HealthController, SERVICE_NAME, RpcClient } from '@pgcloud/messaging';
import { metadataTypeOrmModule } from '@pgcloud/postgres';
import { ProjectServiceConfig } from './config.js';
import { CreateProjects1763770000000 } from './migrations/1763770000000-create-projects.js';
import { ProjectEntity } from './projects/project.entity.js';
import { ProjectsController } from './projects/projects.controller.js';
import { ProjectsService } from './projects/projects.service.js';
import { RegionsService } from './regions/regions.service.js';

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
          migrations: [CreateProjects1763770000000],
        }),
        TypeOrmModule.forFeature([ProjectEntity]),
      ],
      controllers: [ProjectsController, HealthController],
      providers: [
        {
          provide: RpcClient,
          useFactory: () =>
            new RpcClient(config, {
              calls: SERVICE_CALLS['project-service'],
              timeoutMs: config.RPC_TIMEOUT_MS,
            }),
        },
        { provide: ProjectServiceConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'project-service' },
        { provide: EventPublisher, useFactory: () => new EventPublisher(config) },
        RegionsService,
        ProjectsService,
      ],
    };
  }
}
