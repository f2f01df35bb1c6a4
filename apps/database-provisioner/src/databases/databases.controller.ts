import { Controller } from '@nestjs/common';
import {
  CreateDatabaseRequest,
  RestorePointRequest,
  DATABASE_PATTERNS,
  DatabaseIdRef,
  DatabaseRef,
  ProjectRef,
  RequestContext,
  UpdateDatabaseRequest,
} from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { StorageCleanup } from '../storage/storage-cleanup.js';
import { DatabaseBranches } from '../branches/database-branches.js';
import { DatabaseUpdates } from './database-updates.js';
import { DatabasesService } from './databases.service.js';

/** Message handlers of database-provisioner. */
@Controller()
export class DatabasesController {
  constructor(
    private readonly databases: DatabasesService,
    private readonly driver: DatabaseDriver,
    private readonly cleanup: StorageCleanup,
    private readonly updates: DatabaseUpdates,
    private readonly branches: DatabaseBranches,
  ) {}

  @Handles(DATABASE_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: CreateDatabaseRequest) {
    return body.from ? this.branches.create(ctx, body) : this.databases.create(ctx, body);
  }

  @Handles(DATABASE_PATTERNS.branches)
  listBranches(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.branches.list(ctx, refOf(body));
  }

  @Handles(DATABASE_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectRef) {
    return this.databases.list(ctx, body.project_id);
  }

  @Handles(DATABASE_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.databases.get(ctx, refOf(body));
  }

  @Handles(DATABASE_PATTERNS.update)
  update(@MessageCtx() ctx: RequestContext, @MessageBody() body: UpdateDatabaseRequest) {
    return this.updates.update(ctx, body);
  }

  @Handles(DATABASE_PATTERNS.url)
  url(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.databases.url(ctx, refOf(body));
  }

  @Handles(DATABASE_PATTERNS.rotateCredentials)
  rotateCredentials(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.databases.rotateCredentials(ctx, refOf(body));
  }

  @Handles(DATABASE_PATTERNS.delete)
  delete(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.databases.delete(ctx, refOf(body));
  }

  @Handles(DATABASE_PATTERNS.storageCleanup)
  storageCleanup(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.cleanup.open(ctx, refOf(body));
  }

  @Handles(DATABASE_PATTERNS.createRestorePoint)
  createRestorePoint(@MessageCtx() ctx: RequestContext, @MessageBody() body: RestorePointRequest) {
    return this.databases.createRestorePoint(ctx, refOf(body), body.point_name);
  }

  @Handles(DATABASE_PATTERNS.backupSource)
  backupSource(@MessageBody() body: DatabaseIdRef) {
    return this.databases.backupSource(body.database_id);
  }

  @Handles(DATABASE_PATTERNS.running)
  running() {
    return this.databases.running();
  }

  @Handles(DATABASE_PATTERNS.caCertificate)
  async caCertificate(): Promise<{ pem: string }> {
    return { pem: await this.driver.caCertificate() };
  }
}

function refOf(body: DatabaseRef): DatabaseRef {
  return { project_id: body.project_id, name: body.name };
}
