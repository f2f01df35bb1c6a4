import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import {
  CreatedPitrRestore,
  CreateRestorePointDto,
  DatabaseRef,
  DisabledPitr,
  DryRunQueryDto,
  EnabledPitr,
  EnablePitrDto,
  PITR_PATTERNS,
  PitrConfig,
  PitrRestoreDto,
  PITR_RESTORE_BODIES,
  RecoveryWindow,
  RESTORE_PATTERNS,
  Restore,
  RestoreDryRun,
  RestoreList,
  RestorePoint,
  RestorePointList,
  RestoreRef,
  WalArchivePage,
  WalPageQueryDto,
  WalReceiverStatus,
} from '@pgcloud/contracts';
import { WithStatus } from '@pgcloud/http';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import { IDEMPOTENT_ROUTE_ERRORS, Idempotent } from '../idempotency/idempotent.decorator.js';
import {
  ApiBodyOneOf,
  ApiEnvelope,
  ApiErrors,
  DATABASE_ROUTE_ERRORS,
} from '../openapi/api-envelope.decorator.js';

/**
 * Point-in-time recovery of a database: its configuration, the WAL archive, the recovery
 * window and the WAL receiver. Enable, disable and restart-receiver are actions on the
 * database, not creations: 200 (docs/api/errors.md#success).
 */
@ApiTags('pitr')
@ApiBearerAuth()
@ApiParam({ name: 'project_id', type: String, example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
@ApiParam({ name: 'name', type: String, example: 'orders' })
@Controller('projects/:project_id/databases/:name/pitr')
export class PitrController {
  constructor(private readonly rpc: RpcClient) {}

  @Get('config')
  @ApiOperation({
    operationId: 'getPitrConfig',
    summary: 'The PITR configuration of a database',
    description: 'Answers for a database that never had PITR too: `enabled: false`, the rest null.',
  })
  @ApiEnvelope(PitrConfig, { status: 200, description: 'The configuration.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  config(@Ctx() ctx: RequestContext, @Param() ref: DatabaseRef): Promise<PitrConfig> {
    return this.rpc.call(PITR_PATTERNS.config, ctx, refOf(ref));
  }

  @Post('enable')
  @HttpCode(200)
  @Idempotent(200)
  @ApiOperation({
    operationId: 'enablePitr',
    summary: 'Enable PITR, or change its retention',
    description:
      'Takes a base backup and starts the WAL receiver; answers at once with the receiver `starting`. Enabled already: only retention_days changes, and the answer is the current state. Enabled again within `PITR_REENABLE_COOLDOWN_SECONDS` (600 by default) of a disable: 409 COOLDOWN_ACTIVE with `Retry-After`.',
  })
  @ApiEnvelope(EnabledPitr, { status: 200, description: 'PITR is on.' })
  @ApiErrors(
    ...DATABASE_ROUTE_ERRORS,
    'VALIDATION_ERROR',
    'QUOTA_EXCEEDED',
    'DATABASE_NOT_READY',
    'COOLDOWN_ACTIVE',
    'PAYLOAD_TOO_LARGE',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  enable(
    @Ctx() ctx: RequestContext,
    @Param() ref: DatabaseRef,
    @Body() body: EnablePitrDto,
  ): Promise<EnabledPitr> {
    return this.rpc.call(PITR_PATTERNS.enable, ctx, {
      ...refOf(ref),
      retention_days: body.retention_days,
    });
  }

  @Post('disable')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'disablePitr',
    summary: 'Disable PITR',
    description:
      'Stops the receiver and drops its replication slot. The archive is no longer offered for restores and is deleted when its retention passes.',
  })
  @ApiEnvelope(DisabledPitr, { status: 200, description: 'PITR is off.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  disable(@Ctx() ctx: RequestContext, @Param() ref: DatabaseRef): Promise<DisabledPitr> {
    return this.rpc.call(PITR_PATTERNS.disable, ctx, refOf(ref));
  }

  @Get('wal')
  @ApiOperation({
    operationId: 'listWalSegments',
    summary: 'List the archived WAL segments, oldest first',
    description:
      'One page of completed segments; the totals count the whole archive. Pass `next_cursor` as `cursor` for the next page.',
  })
  @ApiEnvelope(WalArchivePage, { status: 200, description: 'One page of the archive.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'VALIDATION_ERROR', 'PITR_NOT_ENABLED')
  wal(
    @Ctx() ctx: RequestContext,
    @Param() ref: DatabaseRef,
    @Query() query: WalPageQueryDto,
  ): Promise<WalArchivePage> {
    return this.rpc.call(PITR_PATTERNS.wal, ctx, {
      ...refOf(ref),
      // Absent stays absent: pitr-worker applies the default page size.
      ...(query.limit === undefined ? {} : { limit: query.limit }),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
    });
  }

  @Get('recovery-window')
  @ApiOperation({
    operationId: 'getRecoveryWindow',
    summary: 'The span a PITR restore can reach',
    description:
      '`to` keeps advancing on an idle database; all null while the first base backup is taken.',
  })
  @ApiEnvelope(RecoveryWindow, { status: 200, description: 'The recovery window.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'PITR_NOT_ENABLED')
  recoveryWindow(@Ctx() ctx: RequestContext, @Param() ref: DatabaseRef): Promise<RecoveryWindow> {
    return this.rpc.call(PITR_PATTERNS.recoveryWindow, ctx, refOf(ref));
  }

  @Get('receiver-status')
  @ApiOperation({ operationId: 'getReceiverStatus', summary: 'The state of the WAL receiver' })
  @ApiEnvelope(WalReceiverStatus, { status: 200, description: 'The receiver.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'PITR_NOT_ENABLED')
  receiverStatus(
    @Ctx() ctx: RequestContext,
    @Param() ref: DatabaseRef,
  ): Promise<WalReceiverStatus> {
    return this.rpc.call(PITR_PATTERNS.receiverStatus, ctx, refOf(ref));
  }

  @Post('restart-receiver')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'restartReceiver',
    summary: 'Restart the WAL receiver',
    description: 'A new receiver: `started_at` is set anew and `errors` to 0.',
  })
  @ApiEnvelope(WalReceiverStatus, { status: 200, description: 'The new receiver.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'PITR_NOT_ENABLED')
  restartReceiver(
    @Ctx() ctx: RequestContext,
    @Param() ref: DatabaseRef,
  ): Promise<WalReceiverStatus> {
    return this.rpc.call(PITR_PATTERNS.restartReceiver, ctx, refOf(ref));
  }

  @Post('restore')
  @Idempotent(201)
  @ApiOperation({
    operationId: 'restorePitr',
    summary: 'Restore to a point in time',
    description:
      'Exactly one target: every transaction committed at or before target_time (ISO 8601, up to microseconds; or `latest`, the moment the request is accepted) and none after; or everything through the record at target_lsn; or up to the restore point target_restore_point. In place by default, as a backup restore; with `target_database`, into a new database of the project.',
  })
  @ApiBodyOneOf(PITR_RESTORE_BODIES)
  @ApiEnvelope(CreatedPitrRestore, { status: 201, description: 'The restore, pending.' })
  @ApiEnvelope(RestoreDryRun, {
    status: 200,
    description: 'With `dry_run=true`: what the restore would do; nothing was created.',
  })
  @ApiErrors(
    ...DATABASE_ROUTE_ERRORS,
    'VALIDATION_ERROR',
    'QUOTA_EXCEEDED',
    'DATABASE_NAME_TAKEN',
    'DATABASE_NOT_READY',
    'PITR_NOT_ENABLED',
    'OPERATION_IN_PROGRESS',
    'TARGET_TIME_INVALID',
    'PAYLOAD_TOO_LARGE',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  async restore(
    @Ctx() ctx: RequestContext,
    @Param() ref: DatabaseRef,
    @Query() query: DryRunQueryDto,
    @Body() body: PitrRestoreDto,
  ): Promise<CreatedPitrRestore | WithStatus<RestoreDryRun>> {
    const request = {
      ...refOf(ref),
      // The one target the body gives (validation let exactly one through).
      ...(body.target_time === undefined ? {} : { target_time: body.target_time }),
      ...(body.target_lsn === undefined ? {} : { target_lsn: body.target_lsn }),
      ...(body.target_restore_point === undefined
        ? {}
        : { target_restore_point: body.target_restore_point }),
      ...(body.target_database == null ? {} : { target_database: body.target_database }),
    };
    return query.dry_run === true
      ? new WithStatus(200, await this.rpc.call(PITR_PATTERNS.planRestore, ctx, request))
      : this.rpc.call(PITR_PATTERNS.restore, ctx, request);
  }

  @Post('restore-points')
  @Idempotent(201)
  @ApiOperation({
    operationId: 'createRestorePoint',
    summary: 'Name the current WAL position',
    description:
      'The server writes a restore point into its WAL; a PITR restore can then stop exactly there (`target_restore_point`). Names are unique in the archive and follow the database name rules. An archive keeps at most 20 (Free) or 200 (Pro): QUOTA_EXCEEDED after that.',
  })
  @ApiEnvelope(RestorePoint, { status: 201, description: 'The restore point.' })
  @ApiErrors(
    ...DATABASE_ROUTE_ERRORS,
    'VALIDATION_ERROR',
    'QUOTA_EXCEEDED',
    'DATABASE_NOT_READY',
    'PITR_NOT_ENABLED',
    'OPERATION_IN_PROGRESS',
    'PAYLOAD_TOO_LARGE',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  createRestorePoint(
    @Ctx() ctx: RequestContext,
    @Param() ref: DatabaseRef,
    @Body() body: CreateRestorePointDto,
  ): Promise<RestorePoint> {
    return this.rpc.call(PITR_PATTERNS.createRestorePoint, ctx, {
      ...refOf(ref),
      point_name: body.name,
    });
  }

  @Get('restore-points')
  @ApiOperation({
    operationId: 'listRestorePoints',
    summary: 'List the restore points of the current archive, oldest first',
  })
  @ApiEnvelope(RestorePointList, { status: 200, description: 'Its restore points.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'PITR_NOT_ENABLED')
  restorePoints(@Ctx() ctx: RequestContext, @Param() ref: DatabaseRef): Promise<RestorePointList> {
    return this.rpc.call(PITR_PATTERNS.restorePoints, ctx, refOf(ref));
  }

  @Get('restores')
  @ApiOperation({
    operationId: 'listPitrRestores',
    summary: 'List the PITR restores of a database, newest first',
  })
  @ApiEnvelope(RestoreList, { status: 200, description: 'Its PITR restores.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  restores(@Ctx() ctx: RequestContext, @Param() ref: DatabaseRef): Promise<RestoreList> {
    return this.rpc.call(RESTORE_PATTERNS.list, ctx, { ...refOf(ref), kind: 'pitr' });
  }

  @Get('restores/:restore_id')
  @ApiParam({ name: 'restore_id', type: String, example: 'rstr_k3v9x0q2m8t4b7w1c5zd' })
  @ApiOperation({ operationId: 'getPitrRestore', summary: 'One PITR restore' })
  @ApiEnvelope(Restore, { status: 200, description: 'The restore.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'RESTORE_NOT_FOUND')
  restoreOf(@Ctx() ctx: RequestContext, @Param() ref: RestoreRef): Promise<Restore> {
    return this.rpc.call(RESTORE_PATTERNS.get, ctx, {
      ...refOf(ref),
      restore_id: ref.restore_id,
      kind: 'pitr',
    });
  }

  @Post('restores/:restore_id/cancel')
  @HttpCode(200)
  @ApiParam({ name: 'restore_id', type: String, example: 'rstr_k3v9x0q2m8t4b7w1c5zd' })
  @ApiOperation({
    operationId: 'cancelPitrRestore',
    summary: 'Cancel a PITR restore',
    description:
      'As for backup restores: stops it before it swaps; the source stays as it was, a database made for it is removed, the restore ends `cancelled`. From `swapping` on, or once it ended: 409 RESTORE_NOT_CANCELLABLE.',
  })
  @ApiEnvelope(Restore, { status: 200, description: 'The restore.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'RESTORE_NOT_FOUND', 'RESTORE_NOT_CANCELLABLE')
  cancelRestore(@Ctx() ctx: RequestContext, @Param() ref: RestoreRef): Promise<Restore> {
    return this.rpc.call(RESTORE_PATTERNS.cancel, ctx, {
      ...refOf(ref),
      restore_id: ref.restore_id,
      kind: 'pitr',
    });
  }
}

/** Only the path's two names travel, whatever else the route matched. */
function refOf(ref: DatabaseRef): DatabaseRef {
  return { project_id: ref.project_id, name: ref.name };
}
