import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import {
  HealthController,
  SERVICE_NAME,
  ServiceClient,
  eventSubscriberProvider,
} from '@pgcloud/messaging';
import { metadataTypeOrmModule } from '@pgcloud/postgres';
import { ObjectStore, objectStoreOptions } from '@pgcloud/storage';
import { ArchiveEntity } from './archive/archive.entity.js';
import { ArchiveStarter } from './archive/archive-starter.js';
import { PitrController } from './archive/pitr.controller.js';
import { PitrEventsListener } from './archive/pitr-events.listener.js';
import { PitrService } from './archive/pitr.service.js';
import { SegmentEntity } from './archive/segment.entity.js';
import { BackupsClient } from './clients/backups.client.js';
import { DatabasesClient } from './clients/databases.client.js';
import { PitrWorkerConfig } from './config.js';
import { CreatePitr1763900000000 } from './migrations/1763900000000-create-pitr.js';
import { ReceiverSupervisor } from './receivers/receiver-supervisor.js';
import { PitrRestores } from './restores/pitr-restores.service.js';
import { RetentionSweep } from './retention/retention-sweep.js';
import { EventTables1764200000000 } from './migrations/1764200000000-event-tables.js';

export const PITR_SCHEMA = 'pitr';

/** pitr-worker: WAL receivers, the WAL archive in S3, the recovery window, retention. */
@Module({})
export class AppModule {
  static forRoot(config: PitrWorkerConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        metadataTypeOrmModule({
          databaseUrl: config.DATABASE_URL,
          schema: PITR_SCHEMA,
          entities: [ArchiveEntity, SegmentEntity],
          migrations: [CreatePitr1763900000000, EventTables1764200000000],
        }),
      ],
      controllers: [PitrController, HealthController],
      providers: [
        { provide: PitrWorkerConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'pitr-worker' },
        eventSubscriberProvider(config, 'pitr'),
        { provide: ObjectStore, useValue: new ObjectStore(objectStoreOptions(config)) },
        {
          provide: DatabasesClient,
          useFactory: () =>
            new DatabasesClient(ServiceClient.connect(config, 'databases', config.RPC_TIMEOUT_MS)),
        },
        {
          provide: BackupsClient,
          useFactory: () =>
            new BackupsClient(ServiceClient.connect(config, 'backups', config.RPC_TIMEOUT_MS)),
        },
        ArchiveStarter,
        PitrService,
        PitrRestores,
        PitrEventsListener,
        ReceiverSupervisor,
        RetentionSweep,
      ],
    };
  }
}
