import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { SecretBox } from '@pgcloud/config';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import {
  HealthController,
  RpcClient,
  SERVICE_NAME,
  eventSubscriberProvider,
  outboxProviders,
} from '@pgcloud/messaging';
import { metadataTypeOrmModule } from '@pgcloud/postgres';
import { ProvisionerConfig } from './config.js';
import { CredentialsEntity, DatabaseEntity } from './databases/database.entity.js';
import { DatabaseJobs } from './databases/database.jobs.js';
import { DatabasesController } from './databases/databases.controller.js';
import { DatabasesService } from './databases/databases.service.js';
import { DatabaseUpdates } from './databases/database-updates.js';
import { DatabaseResizes } from './resize/database-resizes.js';
import { DatabaseBranches } from './branches/database-branches.js';
import { BranchJobs } from './branches/branch.jobs.js';
import { ResizeJobs } from './resize/resize.jobs.js';
import { DatabasesRepository } from './databases/databases.repository.js';
import { ServerLockRepository } from './databases/server-lock.repository.js';
import { driverProviders } from './drivers/driver-providers.js';
import { CreateDatabases1763780000000 } from './migrations/1763780000000-create-databases.js';
import { StorageLimit1763790000000 } from './migrations/1763790000000-storage-limit.js';
import { RestoreEntity } from './restores/restore.entity.js';
import { RestoreJobs } from './restores/restore.jobs.js';
import { RestoresController } from './restores/restores.controller.js';
import { RestoresService } from './restores/restores.service.js';
import { OverdueRestores } from './restores/overdue-restores.js';
import { RestoresRepository } from './restores/restores.repository.js';
import { CreateRestores1763810000000 } from './migrations/1763810000000-create-restores.js';
import { RestoreTargetText1763910000000 } from './migrations/1763910000000-restore-target-text.js';
import { resealCredentials } from './migrations/1764100000000-reseal-credentials.js';
import { Reconciler } from './reconcile/reconciler.js';
import { DiskWatermark } from './storage/disk-watermark.js';
import { StorageCleanup } from './storage/storage-cleanup.js';
import { StorageWatch } from './storage/storage-watch.js';
import { EventTables1764200000000 } from './migrations/1764200000000-event-tables.js';
import { DeletedProjects1764300000000 } from './migrations/1764300000000-deleted-projects.js';
import { RestoreProgress1764400000000 } from './migrations/1764400000000-restore-progress.js';
import { RestoreTargets1764600000000 } from './migrations/1764600000000-restore-targets.js';
import { RestoreStepSeconds1764700000000 } from './migrations/1764700000000-restore-step-seconds.js';
import { RestoreCancel1764800000000 } from './migrations/1764800000000-restore-cancel.js';
import { StorageFence1764900000000 } from './migrations/1764900000000-storage-fence.js';
import { CleanupFrom1765000000000 } from './migrations/1765000000000-cleanup-from.js';
import { RestoreDrills1765200000000 } from './migrations/1765200000000-restore-drills.js';
import { DatabaseExpiry1765300000000 } from './migrations/1765300000000-database-expiry.js';
import { DatabaseResizing1765400000000 } from './migrations/1765400000000-database-resizing.js';
import { DatabaseBranches1765500000000 } from './migrations/1765500000000-database-branches.js';
import { DatabaseExpiry } from './databases/database-expiry.js';
import { DrillEntity } from './drills/drill.entity.js';
import { DrillJobs } from './drills/drill.jobs.js';
import { DrillScheduler } from './drills/drill-scheduler.js';
import { DrillsController } from './drills/drills.controller.js';
import { DrillsRepository } from './drills/drills.repository.js';
import { DrillsService } from './drills/drills.service.js';
import { databaseHost } from './migrations/1764500000000-database-host.js';
import { ProjectDeletedListener } from './databases/project-deleted.listener.js';

export const PROVISIONER_SCHEMA = 'provisioner';
const ENTITIES = [DatabaseEntity, CredentialsEntity, RestoreEntity, DrillEntity];

/** database-provisioner: databases, their credentials and their servers. */
@Module({})
export class AppModule {
  /** `secrets` holds the key (encryption-key.ts): a migration needs it too. */
  static forRoot(config: ProvisionerConfig, secrets: SecretBox): DynamicModule {
    return {
      module: AppModule,
      imports: [
        metadataTypeOrmModule({
          databaseUrl: config.DATABASE_URL,
          schema: PROVISIONER_SCHEMA,
          entities: ENTITIES,
          migrations: [
            CreateDatabases1763780000000,
            StorageLimit1763790000000,
            CreateRestores1763810000000,
            RestoreTargetText1763910000000,
            resealCredentials(secrets),
            EventTables1764200000000,
            DeletedProjects1764300000000,
            RestoreProgress1764400000000,
            // Every record older than this migration was the local driver's (the kubernetes
            // driver came after it): served at DATABASE_HOST, whichever driver runs now.
            databaseHost(config.DATABASE_HOST),
            RestoreTargets1764600000000,
            RestoreStepSeconds1764700000000,
            RestoreCancel1764800000000,
            StorageFence1764900000000,
            CleanupFrom1765000000000,
            RestoreDrills1765200000000,
            DatabaseExpiry1765300000000,
            DatabaseResizing1765400000000,
            DatabaseBranches1765500000000,
          ],
        }),
      ],
      controllers: [DatabasesController, RestoresController, DrillsController, HealthController],
      providers: [
        {
          provide: RpcClient,
          useFactory: () =>
            new RpcClient(config, {
              calls: SERVICE_CALLS['database-provisioner'],
              timeoutMs: config.RPC_TIMEOUT_MS,
            }),
        },
        { provide: ProvisionerConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'database-provisioner' },
        ...outboxProviders(config),
        eventSubscriberProvider(config, 'databases'),
        { provide: SecretBox, useValue: secrets },
        ...driverProviders(config),
        DatabaseJobs,
        DatabasesRepository,
        ServerLockRepository,
        DatabasesService,
        DatabaseUpdates,
        DatabaseResizes,
        DatabaseBranches,
        BranchJobs,
        ResizeJobs,
        DatabaseExpiry,
        RestoreJobs,
        RestoresRepository,
        RestoresService,
        OverdueRestores,
        DrillsRepository,
        DrillJobs,
        DrillsService,
        DrillScheduler,
        Reconciler,
        StorageWatch,
        DiskWatermark,
        StorageCleanup,
        ProjectDeletedListener,
      ],
    };
  }
}
