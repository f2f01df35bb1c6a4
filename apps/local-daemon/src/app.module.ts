import type { DynamicModule, MiddlewareConsumer, NestModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import {
  BODY_LIMIT,
  createValidationPipe,
  EnvelopeInterceptor,
  HttpErrorFilter,
} from '@pgcloud/http';
import express from 'express';
import { AccessToken } from './access/access-token.js';
import { BearerTokenGuard } from './access/bearer-token.guard.js';
import { Catalogue } from './catalogue/catalogue.js';
import { DatabaseExpiry, EXPIRY_SWEEP_MS } from './databases/database-expiry.js';
import { DatabaseInspector } from './databases/database-inspector.js';
import { LocalDatabasesController } from './databases/local-databases.controller.js';
import { LocalDatabasesService } from './databases/local-databases.service.js';
import { ServerDatabases } from './databases/server-databases.js';
import { ManagedServer } from './server/managed-server.js';
import { SnapshotCatalogue } from './catalogue/snapshot-catalogue.js';
import { LocalSnapshotsController } from './snapshots/local-snapshots.controller.js';
import { LocalSnapshots } from './snapshots/local-snapshots.service.js';
import { ArchivePulls, PullPlace } from './pulls/archive-pulls.js';

/** The local daemon: its token, the server it manages, and the databases API. */
@Module({})
export class AppModule implements NestModule {
  static forRoot(
    server: ManagedServer,
    token: AccessToken,
    sweepSeconds: number,
    pulls: PullPlace,
  ): DynamicModule {
    return {
      module: AppModule,
      controllers: [LocalDatabasesController, LocalSnapshotsController],
      providers: [
        { provide: ManagedServer, useValue: server },
        { provide: AccessToken, useValue: token },
        { provide: PullPlace, useValue: pulls },
        ArchivePulls,
        Catalogue,
        ServerDatabases,
        DatabaseInspector,
        LocalDatabasesService,
        SnapshotCatalogue,
        LocalSnapshots,
        { provide: EXPIRY_SWEEP_MS, useValue: sweepSeconds * 1000 },
        DatabaseExpiry,
        { provide: APP_GUARD, useClass: BearerTokenGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    };
  }

  /** Bodies are read only on known routes, so an unknown route is 404 before any 413. */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(express.json({ limit: BODY_LIMIT }))
      .forRoutes(LocalDatabasesController, LocalSnapshotsController);
  }
}
