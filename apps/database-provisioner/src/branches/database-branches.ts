import { Injectable, Logger } from '@nestjs/common';
import type {
  BranchFromDto,
  BranchList,
  CreateDatabaseRequest,
  Database,
  DatabaseConfig,
  DatabaseRef,
  RequestContext,
} from '@pgcloud/contracts';
import { DomainError, PITR_PATTERNS, PROJECT_PATTERNS, targetCount } from '@pgcloud/contracts';
import { RpcClient, requireUser } from '@pgcloud/messaging';
import { ProvisionerConfig } from '../config.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import { DatabasesRepository } from '../databases/databases.repository.js';
import { DatabasesService } from '../databases/databases.service.js';
import { toDatabase } from '../databases/database-view.js';
import { assertExpiryWithinTier, requestedExpiry } from '../databases/expiry.js';
import { assertSizeWithinTier, freeTierLimits } from '../databases/tier-limits.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { BranchJobs } from './branch.jobs.js';

/**
 * Branches (docs/api/databases.md#branches): a new database made from another of the
 * caller's, in any of their projects and the same region. Without a target it is a copy
 * of the source's live server (branch.jobs.ts); it counts against the quota as any
 * database, and carries `parent`.
 */
@Injectable()
export class DatabaseBranches {
  private readonly logger = new Logger(DatabaseBranches.name);

  constructor(
    private readonly rpc: RpcClient,
    private readonly databases: DatabasesService,
    private readonly records: DatabasesRepository,
    private readonly databaseJobs: DatabaseJobs,
    private readonly jobs: BranchJobs,
    private readonly driver: DatabaseDriver,
    private readonly config: ProvisionerConfig,
  ) {}

  /**
   * POST .../databases with `from`. Checked in the API's order: the body (400), the
   * projects and the source (404), the tier (403), then the source's state (409); the
   * quota, the name and room for a server as any create checks them.
   */
  async create(ctx: RequestContext, request: CreateDatabaseRequest): Promise<Database> {
    const ownerId = requireUser(ctx);
    const from = request.from;
    if (!from) throw new Error('a branch needs `from`');
    const now = Date.now();
    const expiresAt = requestedExpiry(request.expires_at, now);
    const project = await this.rpc.call(PROJECT_PATTERNS.check, ctx, { id: request.project_id });
    const source = await this.databases.findOwned(ctx, {
      project_id: from.project_id ?? project.id,
      name: from.database,
    });
    if (request.region !== undefined && request.region !== source.region)
      throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
        { field: 'region', message: `a branch lives in its source's region, ${source.region}` },
      ]);
    const config: DatabaseConfig = { ...source.config, ...request.config };
    assertSizeWithinTier(ctx.tier, config, freeTierLimits(this.config));
    assertExpiryWithinTier(ctx.tier, expiresAt, now);
    if (source.status !== 'running')
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${source.name} is ${source.status}; a branch needs it running.`,
      );
    if (targetCount(from) > 0)
      return this.atPoint(ctx, { ...request, from }, source, { config, expiresAt });
    if (!this.driver.branchesLive)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'This deployment cannot copy a live database yet; restore a backup or a point in ' +
          'time into a new database instead.',
      );
    const record = await this.databases.insert(
      ctx,
      {
        ownerId,
        projectId: project.id,
        name: request.name,
        region: source.region,
        config,
        expiresAt,
        parentDatabaseId: source.id,
        parentName: source.name,
        parentProjectId: source.projectId,
      },
      'restoring',
      async (tx, inserted) => {
        await this.jobs.enqueue(tx, inserted.id, ctx.requestId);
        await this.databaseJobs.announce(tx, ctx, inserted);
      },
    );
    this.logger.log(`branch ${record.id} of ${source.id} copying`);
    this.jobs.wake();
    return toDatabase(record);
  }

  /**
   * A branch at a point of the source's past: a PITR restore into the new database
   * (pitr-worker checks the target against the window and asks here, in restores, for the
   * restore with the branch's project, size and expiry), the new database `restoring`.
   */
  private async atPoint(
    ctx: RequestContext,
    request: CreateDatabaseRequest & { from: BranchFromDto },
    source: DatabaseEntity,
    made: { config: DatabaseConfig; expiresAt: Date | null },
  ): Promise<Database> {
    const { target_time, target_lsn, target_restore_point } = request.from;
    await this.rpc.call(PITR_PATTERNS.restore, ctx, {
      project_id: source.projectId,
      name: source.name,
      ...(target_time === undefined ? {} : { target_time }),
      ...(target_lsn === undefined ? {} : { target_lsn }),
      ...(target_restore_point === undefined ? {} : { target_restore_point }),
      target_database: request.name,
      branch: {
        project_id: request.project_id,
        config: made.config,
        expires_at: made.expiresAt?.toISOString() ?? null,
      },
    });
    const record = await this.records.findByName(request.project_id, request.name);
    if (!record)
      throw new DomainError('DATABASE_NOT_FOUND', `Database ${request.name} was not found.`);
    this.logger.log(`branch ${record.id} of ${source.id} restoring to a point`);
    return toDatabase(record);
  }

  /** GET .../databases/{name}/branches: the databases made from it, oldest first. */
  async list(ctx: RequestContext, ref: DatabaseRef): Promise<BranchList> {
    const source = await this.databases.findOwned(ctx, ref);
    const rows = await this.records.branchesOf(source.id);
    return { branches: rows.map(toDatabase) };
  }
}
