import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import {
  BACKUP_PATTERNS,
  Backup,
  BackupList,
  BackupRef,
  CreatedBackup,
  CreatedRestore,
  Deleted,
  DownloadLink,
  DryRunQueryDto,
  RestoreBackupDto,
  RestoreDryRun,
} from '@pgcloud/contracts';
import { WithStatus } from '@pgcloud/http';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import { IDEMPOTENT_ROUTE_ERRORS, Idempotent } from '../idempotency/idempotent.decorator.js';
import {
  ApiEnvelope,
  ApiErrors,
  DATABASE_ROUTE_ERRORS,
} from '../openapi/api-envelope.decorator.js';

const ApiBackupId = (): MethodDecorator =>
  ApiParam({ name: 'backup_id', type: String, example: 'bkp_k3v9x0q2m8t4b7w1c5zd' });
/** Base backups of a database: list, take, show, download, delete. */
@ApiTags('backups')
@ApiBearerAuth()
@ApiParam({ name: 'project_id', type: String, example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
@ApiParam({ name: 'name', type: String, example: 'orders' })
@Controller('projects/:project_id/databases/:name/backups')
export class BackupsController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @ApiOperation({
    operationId: 'listBackups',
    summary: 'List the backups of a database, newest first',
  })
  @ApiEnvelope(BackupList, { status: 200, description: 'Every backup of the database.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  list(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<BackupList> {
    return this.rpc.call(BACKUP_PATTERNS.list, ctx, {
      project_id: projectId,
      name,
    });
  }

  @Post()
  @Idempotent(201)
  @ApiOperation({
    operationId: 'createBackup',
    summary: 'Take a manual backup',
    description:
      'Answers at once with status `pending`; the base backup streams to object storage and ends `completed` (with its checksum) or `failed`.',
  })
  @ApiEnvelope(CreatedBackup, { status: 201, description: 'The new backup, pending.' })
  @ApiErrors(
    ...DATABASE_ROUTE_ERRORS,
    'QUOTA_EXCEEDED',
    'DATABASE_NOT_READY',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  create(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<CreatedBackup> {
    return this.rpc.call(BACKUP_PATTERNS.create, ctx, {
      project_id: projectId,
      name,
    });
  }

  @Get(':backup_id')
  @ApiBackupId()
  @ApiOperation({ operationId: 'getBackup', summary: 'Show a backup' })
  @ApiEnvelope(Backup, { status: 200, description: 'The backup.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'BACKUP_NOT_FOUND')
  get(@Ctx() ctx: RequestContext, @Param() ref: BackupRef): Promise<Backup> {
    return this.rpc.call(BACKUP_PATTERNS.get, ctx, refOf(ref));
  }

  @Get(':backup_id/download')
  @ApiBackupId()
  @ApiOperation({
    operationId: 'getBackupDownload',
    summary: 'A download link for a completed backup',
    description: 'A pre-signed URL that works without a token for 15 minutes.',
  })
  @ApiEnvelope(DownloadLink, { status: 200, description: 'The link.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'BACKUP_NOT_FOUND', 'BACKUP_NOT_READY')
  download(@Ctx() ctx: RequestContext, @Param() ref: BackupRef): Promise<DownloadLink> {
    return this.rpc.call(BACKUP_PATTERNS.download, ctx, refOf(ref));
  }

  @Post(':backup_id/restore')
  @Idempotent(201)
  @ApiBackupId()
  @ApiOperation({
    operationId: 'restoreBackup',
    summary: 'Restore a backup',
    description:
      'In place: the database goes `restoring` (reads work, writes are refused), the restored data is built beside it and swapped in once checked, with the same connection details. With `target_database`: a new database of the project, `restoring` at once, with its own credentials; the source stays as it is.',
  })
  @ApiBody({
    type: RestoreBackupDto,
    required: false,
    description: 'No body restores in place; a body that cannot be read is refused (400).',
  })
  @ApiEnvelope(CreatedRestore, { status: 201, description: 'The restore, pending.' })
  @ApiEnvelope(RestoreDryRun, {
    status: 200,
    description: 'With `dry_run=true`: what the restore would do; nothing was created.',
  })
  @ApiErrors(
    ...DATABASE_ROUTE_ERRORS,
    'VALIDATION_ERROR',
    'BACKUP_NOT_FOUND',
    'QUOTA_EXCEEDED',
    'DATABASE_NAME_TAKEN',
    'DATABASE_NOT_READY',
    'BACKUP_NOT_READY',
    'OPERATION_IN_PROGRESS',
    'PAYLOAD_TOO_LARGE',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  async restore(
    @Ctx() ctx: RequestContext,
    @Param() ref: BackupRef,
    @Query() query: DryRunQueryDto,
    @Body() body: RestoreBackupDto,
  ): Promise<CreatedRestore | WithStatus<RestoreDryRun>> {
    const request = {
      ...refOf(ref),
      // null is "not given", as undefined is.
      ...(body.target_database == null ? {} : { target_database: body.target_database }),
    };
    return query.dry_run === true
      ? new WithStatus(200, await this.rpc.call(BACKUP_PATTERNS.planRestore, ctx, request))
      : this.rpc.call(BACKUP_PATTERNS.restore, ctx, request);
  }

  @Delete(':backup_id')
  @ApiBackupId()
  @ApiOperation({
    operationId: 'deleteBackup',
    summary: 'Delete a backup',
    description: 'Its object is deleted first, then the record.',
  })
  @ApiEnvelope(Deleted, { status: 200, description: 'The backup is gone.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'BACKUP_NOT_FOUND')
  delete(@Ctx() ctx: RequestContext, @Param() ref: BackupRef): Promise<Deleted> {
    return this.rpc.call(BACKUP_PATTERNS.delete, ctx, refOf(ref));
  }
}

/** Only the path's three names travel, whatever else the route matched. */
function refOf(ref: BackupRef): BackupRef {
  return { project_id: ref.project_id, name: ref.name, backup_id: ref.backup_id };
}
