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
import { BackupEntity } from './backups/backup.entity.js';
import { BACKUPS_SCHEMA, BackupJobs } from './backups/backup.jobs.js';
import { BackupRemoval } from './backups/backup-removal.js';
import { DatabaseDeletedListener } from './backups/database-deleted.listener.js';
import { BackupsController } from './backups/backups.controller.js';
import { BackupsRepository } from './backups/backups.repository.js';
import { BackupsService } from './backups/backups.service.js';
import { BaseBackupUploader } from './backups/base-backup.uploader.js';
import { BackupServiceConfig } from './config.js';
import { CreateBackups1763800000000 } from './migrations/1763800000000-create-backups.js';
import { PitrBaseBackups1763920000000 } from './migrations/1763920000000-pitr-base-backups.js';
import { AutomatedExpiry } from './schedule/automated-expiry.js';
import { BackupScheduler } from './schedule/backup-scheduler.js';
import { EventTables1764200000000 } from './migrations/1764200000000-event-tables.js';

/** backup-service: base backups in S3, their schedule, expiry and download links. */
@Module({})
export class AppModule {
  static forRoot(config: BackupServiceConfig): DynamicModule {
    const store = new ObjectStore(objectStoreOptions(config));
    return {
      module: AppModule,
      imports: [
        metadataTypeOrmModule({
          databaseUrl: config.DATABASE_URL,
          schema: BACKUPS_SCHEMA,
          entities: [BackupEntity],
          migrations: [
            CreateBackups1763800000000,
            PitrBaseBackups1763920000000,
            EventTables1764200000000,
          ],
        }),
      ],
      controllers: [BackupsController, HealthController],
      providers: [
        {
          provide: RpcClient,
          useFactory: () =>
            new RpcClient(config, {
              calls: SERVICE_CALLS['backup-service'],
              timeoutMs: config.RPC_TIMEOUT_MS,
            }),
        },
        { provide: BackupServiceConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'backup-service' },
        ...outboxProviders(config),
        eventSubscriberProvider(config, 'backups'),
        { provide: ObjectStore, useValue: store },
        {
          provide: BaseBackupUploader,
          useFactory: () =>
            new BaseBackupUploader(store, config.pgBinDir, config.compressionThreads),
        },
        AutomatedExpiry,
        BackupsRepository,
        BackupRemoval,
        DatabaseDeletedListener,
        BackupJobs,
        BackupsService,
        BackupScheduler,
      ],
    };
  }
}
