import { Controller } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type { DatabaseIdRef, DatabaseRef, ProjectRef } from '@pgcloud/contracts';
import { DATABASE_PATTERNS, RequestContext } from '@pgcloud/contracts';
import { MessageBody, MessageCtx } from '@pgcloud/messaging';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { DatabasesService } from './databases.service.js';
import { CreateDatabaseMessage } from './create-database.message.js';

/** Message handlers of database-provisioner. */
@Controller()
export class DatabasesController {
  constructor(
    private readonly databases: DatabasesService,
    private readonly driver: DatabaseDriver,
  ) {}

  @MessagePattern(DATABASE_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: CreateDatabaseMessage) {
    return this.databases.create(ctx, body);
  }

  @MessagePattern(DATABASE_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectRef) {
    return this.databases.list(ctx, String(body.project_id));
  }

  @MessagePattern(DATABASE_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.databases.get(ctx, refOf(body));
  }

  @MessagePattern(DATABASE_PATTERNS.url)
  url(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.databases.url(ctx, refOf(body));
  }

  @MessagePattern(DATABASE_PATTERNS.delete)
  delete(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.databases.delete(ctx, refOf(body));
  }

  @MessagePattern(DATABASE_PATTERNS.countForProject)
  countForProject(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectRef) {
    return this.databases.countForProject(ctx, String(body.project_id));
  }

  @MessagePattern(DATABASE_PATTERNS.deleteForProject)
  deleteForProject(@MessageCtx() ctx: RequestContext, @MessageBody() body: ProjectRef) {
    return this.databases.deleteForProject(ctx, String(body.project_id));
  }

  @MessagePattern(DATABASE_PATTERNS.backupSource)
  backupSource(@MessageBody() body: DatabaseIdRef) {
    return this.databases.backupSource(String(body.database_id));
  }

  @MessagePattern(DATABASE_PATTERNS.running)
  running() {
    return this.databases.running();
  }

  @MessagePattern(DATABASE_PATTERNS.caCertificate)
  async caCertificate(): Promise<{ pem: string }> {
    return { pem: await this.driver.caCertificate() };
  }
}

function refOf(body: DatabaseRef): DatabaseRef {
  return { project_id: String(body.project_id), name: String(body.name) };
}
