import { Controller } from '@nestjs/common';
import {
  BACKUP_PATTERNS,
  BackupPlanRequest,
  BackupRef,
  BackupRestoreRequest,
  DatabaseIdRef,
  DatabaseIdsRequest,
  DatabaseRef,
  RequestContext,
} from '@pgcloud/contracts';
import { Handles, MessageBody, MessageCtx } from '@pgcloud/messaging';
import { BackupsService } from './backups.service.js';

/** Message handlers of backup-service. */
@Controller()
export class BackupsController {
  constructor(private readonly backups: BackupsService) {}

  @Handles(BACKUP_PATTERNS.list)
  list(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.backups.list(ctx, databaseRefOf(body));
  }

  @Handles(BACKUP_PATTERNS.create)
  create(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.backups.create(ctx, databaseRefOf(body));
  }

  @Handles(BACKUP_PATTERNS.get)
  get(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRef) {
    return this.backups.get(ctx, backupRefOf(body));
  }

  @Handles(BACKUP_PATTERNS.download)
  download(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRef) {
    return this.backups.download(ctx, backupRefOf(body));
  }

  @Handles(BACKUP_PATTERNS.delete)
  delete(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRef) {
    return this.backups.delete(ctx, backupRefOf(body));
  }

  @Handles(BACKUP_PATTERNS.restore)
  restore(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRestoreRequest) {
    return this.backups.restore(ctx, backupRefOf(body), { target_database: body.target_database });
  }

  @Handles(BACKUP_PATTERNS.planRestore)
  planRestore(@MessageCtx() ctx: RequestContext, @MessageBody() body: BackupRestoreRequest) {
    return this.backups.planRestore(ctx, backupRefOf(body), {
      target_database: body.target_database,
    });
  }

  @Handles(BACKUP_PATTERNS.restorePlan)
  restorePlan(@MessageBody() body: BackupPlanRequest) {
    return this.backups.restorePlan(body.backup_id, body.database_id);
  }

  @Handles(BACKUP_PATTERNS.takeBase)
  takeBase(@MessageCtx() ctx: RequestContext, @MessageBody() body: DatabaseRef) {
    return this.backups.takeBase(ctx, databaseRefOf(body));
  }

  @Handles(BACKUP_PATTERNS.forArchive)
  forArchive(@MessageBody() body: DatabaseIdRef) {
    return this.backups.forArchive(body.database_id);
  }

  @Handles(BACKUP_PATTERNS.withCompletedBackup)
  withCompletedBackup(@MessageBody() body: DatabaseIdsRequest) {
    return this.backups.withCompleted(body.database_ids);
  }
}

/** The database a message names, and nothing else it carries. */
function databaseRefOf(body: DatabaseRef): DatabaseRef {
  return { project_id: body.project_id, name: body.name };
}

function backupRefOf(body: BackupRef): BackupRef {
  return { ...databaseRefOf(body), backup_id: body.backup_id };
}
