import { Injectable, Logger } from '@nestjs/common';
import type { DatabaseRef, Drill, DrillList, DrillRef, RequestContext } from '@pgcloud/contracts';
import { DomainError, isId, newId } from '@pgcloud/contracts';
import { isUniqueViolation } from '@pgcloud/postgres';
import { ProvisionerConfig } from '../config.js';
import { DatabasesService } from '../databases/databases.service.js';
import { DrillJobs } from './drill.jobs.js';
import { toDrill } from './drill-view.js';
import { DrillsRepository } from './drills.repository.js';

const DAY_MS = 86_400_000;

/**
 * Restore drills asked for by a database's owner, and the drills they may read
 * (docs/api/drills.md). One at a time per database, and a quota of manual ones a day.
 */
@Injectable()
export class DrillsService {
  private readonly logger = new Logger(DrillsService.name);

  constructor(
    private readonly drills: DrillsRepository,
    private readonly databases: DatabasesService,
    private readonly jobs: DrillJobs,
    private readonly config: ProvisionerConfig,
  ) {}

  async create(ctx: RequestContext, ref: DatabaseRef): Promise<Drill> {
    const database = await this.databases.findOwned(ctx, ref);
    if (database.status !== 'running')
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${database.name} is ${database.status}; a drill needs it running.`,
      );
    const limit =
      ctx.tier === 'pro' ? this.config.DRILL_DAILY_LIMIT_PRO : this.config.DRILL_DAILY_LIMIT_FREE;
    const id = newId('drl');
    try {
      await this.drills.transaction(async (tx) => {
        const today = await this.drills.manualSince(tx, database.id, new Date(Date.now() - DAY_MS));
        if (today >= limit)
          throw new DomainError(
            'QUOTA_EXCEEDED',
            `A database may have ${limit} manual drills in 24 hours on its tier.`,
          );
        await this.drills.insert(tx, {
          id,
          databaseId: database.id,
          kind: 'manual',
          status: 'pending',
          phase: 'queued',
        });
        await this.jobs.enqueue(tx, id, ctx.requestId);
      });
    } catch (err) {
      if (
        isUniqueViolation(err) &&
        (err as { constraint?: string }).constraint === 'drills_one_active'
      )
        throw new DomainError(
          'OPERATION_IN_PROGRESS',
          `A drill of database ${database.name} is already under way.`,
        );
      throw err;
    }
    this.jobs.wake();
    this.logger.log(`drill ${id} of ${database.id} pending`);
    return toDrill(await this.get404(id, database.id));
  }

  async list(ctx: RequestContext, ref: DatabaseRef): Promise<DrillList> {
    const database = await this.databases.findOwned(ctx, ref);
    return { drills: (await this.drills.listOfDatabase(database.id)).map(toDrill) };
  }

  async get(ctx: RequestContext, ref: DrillRef): Promise<Drill> {
    const database = await this.databases.findOwned(ctx, ref);
    return toDrill(await this.get404(ref.drill_id, database.id));
  }

  private async get404(id: string, databaseId: string) {
    const record = isId('drl', id) ? await this.drills.findOfDatabase(id, databaseId) : null;
    if (!record) throw new DomainError('DRILL_NOT_FOUND', `Drill ${id} was not found.`);
    return record;
  }
}
