import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import {
  HealthController,
  RpcClient,
  SERVICE_NAME,
  eventSubscriberProvider,
  outboxProviders,
} from '@pgcloud/messaging';
import { metadataTypeOrmModule } from '@pgcloud/postgres';
import { ObjectStore, objectStoreOptions } from '@pgcloud/storage';
import { ArchiveChecks } from './archive/archive-checks.js';
import { ArchiveEntity } from './archive/archive.entity.js';
import { ArchiveRepository } from './archive/archive.repository.js';
import { ArchiveStarter } from './archive/archive-starter.js';
import { PitrController } from './archive/pitr.controller.js';
import { PitrEventsListener } from './archive/pitr-events.listener.js';
import { PitrService } from './archive/pitr.service.js';
import { ReceiverLeases } from './archive/receiver-leases.repository.js';
import { ReceiverProgress } from './archive/receiver-progress.repository.js';
import { SegmentEntity } from './archive/segment.entity.js';
import { SegmentRepository } from './archive/segment.repository.js';
import { Clock } from './clock.js';
import { PitrWorkerConfig } from './config.js';
import { CreatePitr1763900000000 } from './migrations/1763900000000-create-pitr.js';
import { PrimarySessions } from './receivers/primary-session.js';
import { ReceiverSupervisor } from './receivers/receiver-supervisor.js';
import { PitrRestores } from './restores/pitr-restores.service.js';
import { RetentionSweep } from './retention/retention-sweep.js';
import { SweepLock } from './retention/sweep-lock.repository.js';
import { EventTables1764200000000 } from './migrations/1764200000000-event-tables.js';
import { RestorePoints1764600000000 } from './migrations/1764600000000-restore-points.js';
import { SegmentPieces1764900000000 } from './migrations/1764900000000-segment-pieces.js';
import { ArchiveHealth1765000000000 } from './migrations/1765000000000-archive-health.js';
import { ArchiveIntact1765100000000 } from './migrations/1765100000000-archive-intact.js';
import { CompressedSegments1765200000000 } from './migrations/1765200000000-compressed-segments.js';
import { RestorePointEntity } from './restores/restore-point.entity.js';
import { RestorePoints } from './restores/restore-points.service.js';
import { RestorePointsRepository } from './restores/restore-points.repository.js';
import { RestoreTargets } from './restores/restore-targets.js';

export const PITR_SCHEMA = 'pitr';

/**
 * pitr-worker: WAL receivers, the WAL archive in S3 and its health, the recovery window,
 * retention.
 */
@Module({})
export class AppModule {
  static forRoot(config: PitrWorkerConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        metadataTypeOrmModule({
          databaseUrl: config.DATABASE_URL,
          schema: PITR_SCHEMA,
          entities: [ArchiveEntity, SegmentEntity, RestorePointEntity],
          migrations: [
            CreatePitr1763900000000,
            EventTables1764200000000,
            RestorePoints1764600000000,
            SegmentPieces1764900000000,
            ArchiveHealth1765000000000,
            ArchiveIntact1765100000000,
            CompressedSegments1765200000000,
          ],
        }),
      ],
      controllers: [PitrController, HealthController],
      providers: [
        { provide: PitrWorkerConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'pitr-worker' },
        eventSubscriberProvider(config, 'pitr'),
        ...outboxProviders(config),
        { provide: ObjectStore, useValue: new ObjectStore(objectStoreOptions(config)) },
        {
          provide: RpcClient,
          useFactory: () =>
            new RpcClient(config, {
              calls: SERVICE_CALLS['pitr-worker'],
              timeoutMs: config.RPC_TIMEOUT_MS,
            }),
        },
        ArchiveRepository,
        SegmentRepository,
        ReceiverLeases,
        ReceiverProgress,
        SweepLock,
        PrimarySessions,
        Clock,
        ArchiveStarter,
        PitrService,
        PitrRestores,
        RestoreTargets,
        RestorePoints,
        RestorePointsRepository,
        PitrEventsListener,
        ReceiverSupervisor,
        RetentionSweep,
        ArchiveChecks,
      ],
    };
  }
}
