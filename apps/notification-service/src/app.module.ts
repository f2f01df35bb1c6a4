import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { SecretBox, encryptionKeyOf } from '@pgcloud/config';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import {
  HealthController,
  RpcClient,
  SERVICE_NAME,
  eventSubscriberProvider,
} from '@pgcloud/messaging';
import { metadataTypeOrmModule } from '@pgcloud/postgres';
import { NotificationServiceConfig } from './config.js';
import { Deliverer } from './delivery/deliverer.js';
import { DeliveryWorker } from './delivery/delivery-worker.js';
import { MessagesRepository } from './delivery/messages.repository.js';
import { EndpointEntity } from './endpoints/endpoint.entity.js';
import { EndpointsController } from './endpoints/endpoints.controller.js';
import { EndpointsRepository } from './endpoints/endpoints.repository.js';
import { EndpointsService } from './endpoints/endpoints.service.js';
import { DomainEventsListener } from './events/domain-events.listener.js';
import { CreateWebhooks1765000000000 } from './migrations/1765000000000-create-webhooks.js';
import { EventTables1765000000001 } from './migrations/1765000000001-event-tables.js';
import { TargetClient, readExtraCa } from './targets/target-client.js';

/** The schema notification-service keeps its tables in. */
export const NOTIFICATIONS_SCHEMA = 'notifications';

/** notification-service: webhook endpoints, and the signed delivery of events to them. */
@Module({})
export class AppModule {
  static forRoot(config: NotificationServiceConfig): DynamicModule {
    // Read at start: a bad key or CA file stops the service before it takes any work.
    const box = new SecretBox(encryptionKeyOf(config.ENCRYPTION_KEY));
    const client = new TargetClient({
      timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      extraCa: readExtraCa(config.WEBHOOK_CA_FILE),
    });
    return {
      module: AppModule,
      imports: [
        metadataTypeOrmModule({
          databaseUrl: config.DATABASE_URL,
          schema: NOTIFICATIONS_SCHEMA,
          entities: [EndpointEntity],
          migrations: [CreateWebhooks1765000000000, EventTables1765000000001],
        }),
      ],
      controllers: [EndpointsController, HealthController],
      providers: [
        {
          provide: RpcClient,
          useFactory: () =>
            new RpcClient(config, {
              calls: SERVICE_CALLS['notification-service'],
              timeoutMs: config.RPC_TIMEOUT_MS,
            }),
        },
        { provide: NotificationServiceConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'notification-service' },
        { provide: SecretBox, useValue: box },
        { provide: TargetClient, useValue: client },
        eventSubscriberProvider(config, 'notifications'),
        EndpointsRepository,
        EndpointsService,
        MessagesRepository,
        DomainEventsListener,
        Deliverer,
        DeliveryWorker,
      ],
    };
  }
}
