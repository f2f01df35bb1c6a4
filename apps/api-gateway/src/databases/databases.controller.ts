import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { RequestContext } from '@pgcloud/contracts';
import {
  ConnectionDetails,
  CreateDatabaseDto,
  DATABASE_PATTERNS,
  BranchList,
  Database,
  DatabaseList,
  Deleted,
  UpdateDatabaseDto,
} from '@pgcloud/contracts';
import { RpcClient } from '@pgcloud/messaging';
import { Ctx } from '../http/request-context.js';
import { IDEMPOTENT_ROUTE_ERRORS, Idempotent } from '../idempotency/idempotent.decorator.js';
import {
  ApiEnvelope,
  ApiErrors,
  DATABASE_ROUTE_ERRORS,
} from '../openapi/api-envelope.decorator.js';

const ApiDatabasePath = (): MethodDecorator & ClassDecorator =>
  ApiParam({ name: 'project_id', type: String, example: 'proj_k3v9x0q2m8t4b7w1c5zd' });
const ApiDatabaseName = (): MethodDecorator =>
  ApiParam({ name: 'name', type: String, example: 'orders' });

/** Databases of a project of the signed-in account. */
@ApiTags('databases')
@ApiBearerAuth()
@ApiDatabasePath()
@Controller('projects/:project_id/databases')
export class DatabasesController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @ApiOperation({ operationId: 'listDatabases', summary: 'List the databases of a project' })
  @ApiEnvelope(DatabaseList, { status: 200, description: 'Every database of the project.' })
  @ApiErrors('AUTH_REQUIRED', 'PROJECT_NOT_FOUND', 'RATE_LIMIT_EXCEEDED', 'SERVICE_UNAVAILABLE')
  list(@Ctx() ctx: RequestContext, @Param('project_id') projectId: string): Promise<DatabaseList> {
    return this.rpc.call(DATABASE_PATTERNS.list, ctx, { project_id: projectId });
  }

  @Post()
  @Idempotent(201)
  @ApiOperation({
    operationId: 'createDatabase',
    summary: 'Create a database',
    description:
      'Answers at once with status `provisioning`; the database is `running` once its server accepts a TLS login. With `from`, a branch of another of the caller’s databases (docs/api/databases.md#branches): `restoring` until its copy runs; the source must be `running`.',
  })
  @ApiEnvelope(Database, { status: 201, description: 'The new database, provisioning.' })
  @ApiErrors(
    'VALIDATION_ERROR',
    'AUTH_REQUIRED',
    'PROJECT_NOT_FOUND',
    'DATABASE_NOT_FOUND',
    'QUOTA_EXCEEDED',
    'DATABASE_NAME_TAKEN',
    'DATABASE_NOT_READY',
    'PAYLOAD_TOO_LARGE',
    'RATE_LIMIT_EXCEEDED',
    'SERVICE_UNAVAILABLE',
    ...IDEMPOTENT_ROUTE_ERRORS,
  )
  create(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Body() body: CreateDatabaseDto,
  ): Promise<Database> {
    return this.rpc.call(DATABASE_PATTERNS.create, ctx, { ...body, project_id: projectId });
  }

  @Get(':name')
  @ApiDatabaseName()
  @ApiOperation({ operationId: 'getDatabase', summary: 'Show a database' })
  @ApiEnvelope(Database, { status: 200, description: 'The database.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  get(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<Database> {
    return this.rpc.call(DATABASE_PATTERNS.get, ctx, {
      project_id: projectId,
      name,
    });
  }

  @Patch(':name')
  @ApiDatabaseName()
  @ApiOperation({
    operationId: 'updateDatabase',
    summary: 'Resize a database, or move or clear its expiry',
    description:
      '`config` resizes it (the parts given; bounds as at creation): it needs `running`, answers with the database `resizing`, and is `running` again once its server runs with the new size (one restart: sessions drop once). Less storage only while the data fits under 90% of it, and never where volumes only grow (409 STORAGE_IN_USE). `expires_at` moves the expiry (in the future, at most 365 days ahead; Free: 30), null clears it.',
  })
  @ApiEnvelope(Database, { status: 200, description: 'The database as changed.' })
  @ApiErrors(
    'VALIDATION_ERROR',
    ...DATABASE_ROUTE_ERRORS,
    'QUOTA_EXCEEDED',
    'DATABASE_NOT_READY',
    'STORAGE_IN_USE',
    'PAYLOAD_TOO_LARGE',
  )
  update(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
    @Body() body: UpdateDatabaseDto,
  ): Promise<Database> {
    return this.rpc.call(DATABASE_PATTERNS.update, ctx, { ...body, project_id: projectId, name });
  }

  @Get(':name/branches')
  @ApiDatabaseName()
  @ApiOperation({
    operationId: 'listDatabaseBranches',
    summary: 'The databases branched from a database',
  })
  @ApiEnvelope(BranchList, { status: 200, description: 'Its branches, oldest first.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  branches(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<BranchList> {
    return this.rpc.call(DATABASE_PATTERNS.branches, ctx, { project_id: projectId, name });
  }

  @Get(':name/url')
  @ApiDatabaseName()
  @ApiOperation({
    operationId: 'getDatabaseUrl',
    summary: 'Connection details of a running database',
    description: 'The connection string holds the password.',
  })
  @ApiEnvelope(ConnectionDetails, { status: 200, description: 'How to connect.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'DATABASE_NOT_READY')
  url(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<ConnectionDetails> {
    return this.rpc.call(DATABASE_PATTERNS.url, ctx, {
      project_id: projectId,
      name,
    });
  }

  @Post(':name/credentials/rotate')
  @HttpCode(200)
  @ApiDatabaseName()
  @ApiOperation({
    operationId: 'rotateDatabaseCredentials',
    summary: "A new password for the database's login role",
    description:
      'New sessions with the old password are refused from this answer on; sessions open with it go on until they end. Answers the connection details with the new password, as `/url` does from then on. Needs `running` and not fenced (409 DATABASE_NOT_READY); a server busy with a restore or a removal answers 409 OPERATION_IN_PROGRESS.',
  })
  @ApiEnvelope(ConnectionDetails, { status: 200, description: 'How to connect now.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'DATABASE_NOT_READY', 'OPERATION_IN_PROGRESS')
  rotateCredentials(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<ConnectionDetails> {
    return this.rpc.call(DATABASE_PATTERNS.rotateCredentials, ctx, { project_id: projectId, name });
  }

  @Post(':name/storage/cleanup')
  @HttpCode(200)
  @ApiDatabaseName()
  @ApiOperation({
    operationId: 'openStorageCleanup',
    summary: 'Lift the storage fence for a cleanup window',
    description:
      'A fenced database (`storage.state: fenced`) runs writable again for 15 minutes with the read-only mode in place: delete rows inside `BEGIN READ WRITE`, then VACUUM. It is fenced again at once if its data grows past the limit by twice the grace, and when the window ends if it is still past the grace. Once an hour (else 409 COOLDOWN_ACTIVE with `Retry-After`). A database that is not fenced is answered as it is.',
  })
  @ApiEnvelope(Database, {
    status: 200,
    description: 'The database, with `storage.cleanup_until` while the window is open.',
  })
  @ApiErrors(...DATABASE_ROUTE_ERRORS, 'DATABASE_NOT_READY', 'COOLDOWN_ACTIVE')
  storageCleanup(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<Database> {
    return this.rpc.call(DATABASE_PATTERNS.storageCleanup, ctx, { project_id: projectId, name });
  }

  @Delete(':name')
  @ApiDatabaseName()
  @ApiOperation({
    operationId: 'deleteDatabase',
    summary: 'Delete a database',
    description: 'Gone from the API at once; its server and data are removed in the background.',
  })
  @ApiEnvelope(Deleted, { status: 200, description: 'The database is gone.' })
  @ApiErrors(...DATABASE_ROUTE_ERRORS)
  delete(
    @Ctx() ctx: RequestContext,
    @Param('project_id') projectId: string,
    @Param('name') name: string,
  ): Promise<Deleted> {
    return this.rpc.call(DATABASE_PATTERNS.delete, ctx, {
      project_id: projectId,
      name,
    });
  }
}
