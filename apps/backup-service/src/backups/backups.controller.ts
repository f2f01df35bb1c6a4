import { Controller } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import type { BackupRef, DatabaseIdRef, DatabaseRef, RestoreOptions } from '@pgcloud/contracts';
import { BACKUP_PATTERNS, BACKUP_RESTORE_PATTERNS, RequestContext } from '@pgcloud/contracts';
import { MessageBody, MessageCtx } from '@pgcloud/messaging';
import { BackupsService } from './backups.service.js';

/** Message handlers of backup-service. */
@Controller()
export class BackupsController {
  constructor(private readonly backups: BackupsService) {}

  @MessagePattern(BACKUP_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.backups.list(ctx, databaseRefOf(body));
  }

  @MessagePattern(BACKUP_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.backups.create(ctx, databaseRefOf(body));
  }

  @MessagePattern(BACKUP_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRef) {
    return this.backups.get(ctx, backupRefOf(body));
  }

  @MessagePattern(BACKUP_PATTERNS.download)
  download(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRef) {
    return this.backups.download(ctx, backupRefOf(body));
  }

  @MessagePattern(BACKUP_PATTERNS.delete)
  delete(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRef) {
    return this.backups.delete(ctx, backupRefOf(body));
  }

  @MessagePattern(BACKUP_RESTORE_PATTERNS.restore)
  restore(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRef & RestoreOptions) {
    const options: RestoreOptions =
      body.target_database == null ? {} : { target_database: String(body.target_database) };
    return this.backups.restore(ctx, backupRefOf(body), options);
  }

  @MessagePattern(BACKUP_RESTORE_PATTERNS.plan)
  restorePlan(@MessageBody() body: { backup_id: string }) {
    return this.backups.restorePlan(String(body.backup_id));
  }

  @MessagePattern(BACKUP_PATTERNS.takeBase)
  takeBase(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.backups.takeBase(ctx, databaseRefOf(body));
  }

  @MessagePattern(BACKUP_PATTERNS.forArchive)
  forArchive(@MessageBody() body: DatabaseIdRef) {
    return this.backups.forArchive(String(body.database_id));
  }

  @MessagePattern(BACKUP_PATTERNS.deleteForDatabase)
  deleteForDatabase(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseIdRef) {
    return this.backups.deleteForDatabase(ctx, String(body.database_id));
  }
}

function databaseRefOf(body: DatabaseRef): DatabaseRef {
  return { project_id: String(body.project_id), name: String(body.name) };
}

function backupRefOf(body: BackupRef): BackupRef {
  return { ...databaseRefOf(body), backup_id: String(body.backup_id) };
}
