import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { createValidationPipe, EnvelopeInterceptor, HttpErrorFilter } from '@pgcloud/http';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { ManagementModule } from '@pgcloud/observability';
import { AuthController } from './auth/auth.controller.js';
import { BackupsController } from './backups/backups.controller.js';
import { PitrController } from './pitr/pitr.controller.js';
import { RestoresController } from './restores/restores.controller.js';
import { DrillsController } from './drills/drills.controller.js';
import { WebhooksController } from './webhooks/webhooks.controller.js';
import { BearerAuthGuard } from './auth/bearer-auth.guard.js';
import { TokenLookup } from './auth/token-lookup.js';
import { TokenCache } from './auth/token-cache.js';
import { GatewayConfig } from './config.js';
import { CaCertificateController } from './databases/ca-certificate.controller.js';
import { DatabasesController } from './databases/databases.controller.js';
import { DevicePageController } from './device/device-page.controller.js';
import { HealthController } from './health/health.controller.js';
import { IdempotencyKeys } from './idempotency/idempotency-keys.js';
import { IdempotencyStore, InMemoryIdempotencyStore } from './idempotency/idempotency.store.js';
import { RedisIdempotencyStore } from './idempotency/redis-idempotency.store.js';
import { UnreadableBodyGuard } from './http/body-parsing.js';
import { ProjectsController, RegionsController } from './projects/projects.controller.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { OverlappedSpendInterceptor } from './rate-limit/overlapped-spend.interceptor.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';
import { InMemoryRateLimitStore, RateLimitStore } from './rate-limit/rate-limit.store.js';
import { RedisRateLimitStore } from './rate-limit/redis-rate-limit.store.js';

const CONTROLLERS = [
  DatabasesController,
  BackupsController,
  RestoresController,
  DrillsController,
  PitrController,
  WebhooksController,
  CaCertificateController,
  HealthController,
  AuthController,
  DevicePageController,
  ProjectsController,
  RegionsController,
];

/** The cloud HTTP API: authenticate, rate-limit, validate, forward, wrap. */
@Module({})
export class AppModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: AppModule,
      // The operator's port (health, metrics) is a server of its own: no guard here reaches it.
      imports: [
        ManagementModule.forRoot({
          service: 'api-gateway',
          MANAGEMENT_PORT: config.MANAGEMENT_PORT,
          MANAGEMENT_HOST: config.MANAGEMENT_HOST,
        }),
      ],
      controllers: CONTROLLERS,
      providers: [
        { provide: GatewayConfig, useValue: config },
        InMemoryRateLimitStore,
        {
          provide: RateLimitStore,
          inject: [InMemoryRateLimitStore],
          useFactory: (memory: InMemoryRateLimitStore) =>
            config.REDIS_URL
              ? new RedisRateLimitStore(
                  config.REDIS_URL,
                  config.RMQ_QUEUE_PREFIX,
                  config.REDIS_TIMEOUT_MS,
                  memory,
                )
              : memory,
        },
        RateLimiter,
        {
          // Shared by every gateway through Redis; a lone gateway keeps them in memory.
          provide: IdempotencyStore,
          useFactory: () =>
            config.REDIS_URL
              ? new RedisIdempotencyStore(
                  config.REDIS_URL,
                  config.RMQ_QUEUE_PREFIX,
                  config.REDIS_TIMEOUT_MS,
                )
              : new InMemoryIdempotencyStore(),
        },
        IdempotencyKeys,
        {
          // The edge calls every service; its calls share the time until the deadline.
          provide: RpcClient,
          useFactory: () =>
            new RpcClient(config, {
              calls: SERVICE_CALLS['api-gateway'],
              timeoutMs: config.RPC_TIMEOUT_MS,
              atEdge: true,
            }),
        },
        TokenCache,
        TokenLookup,
        // Guards run in this order: who calls, then their bucket (and 401 for the anonymous),
        // then a body that could not be read (400).
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_GUARD, useClass: UnreadableBodyGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        // Outermost: a read that spends its token meanwhile is answered once the bucket has.
        { provide: APP_INTERCEPTOR, useClass: OverlappedSpendInterceptor },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    };
  }
}
