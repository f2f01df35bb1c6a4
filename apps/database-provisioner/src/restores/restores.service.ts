import { Injectable, Logger } from '@nestjs/common';
import type {
  CheckRestoreRequest,
  CreateRestoreRequest,
  CreatedRestore,
  DatabaseRef,
  Restore,
  RestoreKind,
  RequestContext,
  RestoreRef,
} from '@pgcloud/contracts';
import { BACKUP_PATTERNS, DomainError, PROJECT_PATTERNS, isId, newId } from '@pgcloud/contracts';
import { RpcClient, assertTimeLeft, requireUser, waitWithinDeadline } from '@pgcloud/messaging';
import { isUniqueViolation } from '@pgcloud/postgres';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabasesService } from '../databases/databases.service.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { ESTIMATE_HISTORY, estimateSeconds, pastRestore } from './restore-estimate.js';
import { RESTORE_BEGINS } from './restore-lifecycle.js';
import type { Transaction } from '../databases/databases.repository.js';
import { DatabasesRepository, moveDatabase } from '../databases/databases.repository.js';
import { RestoreJobs } from './restore.jobs.js';
import type { NewRestore } from './restores.repository.js';
import { RestoresRepository } from './restores.repository.js';
import { toRestore } from './restore-view.js';

/**
 * Restores (docs/api/restores.md): the provisioner records and runs them, whichever
 * service planned them. In place, the database goes `restoring`; with target_database, a
 * new database of the project appears `restoring` at once and the source stays as it is.
 */
@Injectable()
export class RestoresService {
  private readonly logger = new Logger(RestoresService.name);

  constructor(
    private readonly restores: RestoresRepository,
    private readonly records: DatabasesRepository,
    private readonly databases: DatabasesService,
    private readonly jobs: RestoreJobs,
    private readonly driver: DatabaseDriver,
    private readonly rpc: RpcClient,
  ) {}

  async create(ctx: RequestContext, request: CreateRestoreRequest): Promise<CreatedRestore> {
    const { id, source } = await this.record(ctx, request, false);
    // Read before the job runs, which may move it on at once: the answer tells what was
    // created, a pending restore.
    const saved = await this.restores.get(id);
    if (request.target_database === undefined) {
      // On hold before the answer: no write is accepted from now on and lost by the swap.
      // Its job, held back meanwhile, runs once the hold is done (and holds the server
      // again first; after a crash in between it runs when its wait is over). Should the
      // hold outlast the time this answer has, the answer goes first: the restore was
      // accepted, and a 503 would say it was not.
      const warn = (what: string) => (err: unknown) => this.logger.warn(`${what}: ${String(err)}`);
      const held = this.driver
        .holdForRestore(source.platformServiceId)
        .catch(warn('hold failed; the job retries it'))
        .then(() => this.jobs.release(id))
        .catch(warn('restore job not released; it runs once its wait is over'));
      if (!(await waitWithinDeadline(ctx, held)))
        this.logger.warn(`answering before the hold of ${source.id} is done`);
    } else this.jobs.wake();
    this.logger.log(`restore ${saved.id} of ${source.id} pending`);
    const created: CreatedRestore = {
      restore_id: saved.id,
      status: 'pending',
      started_at: saved.startedAt.toISOString(),
    };
    if (saved.targetDatabase) created.target_database = saved.targetDatabase;
    return created;
  }

  /**
   * restores.check (`?dry_run=true`): every check create makes, in the same transaction,
   * rolled back; and how long the restore would take at this deployment's rates.
   */
  async check(
    ctx: RequestContext,
    request: CheckRestoreRequest,
  ): Promise<{ estimated_seconds: number }> {
    await this.record(ctx, request, true);
    const history = (await this.restores.estimateHistory(ESTIMATE_HISTORY)).map(pastRestore);
    return {
      estimated_seconds: estimateSeconds(history, {
        kind: request.kind,
        bytes: request.base_backup_size_bytes,
        walFiles: request.wal_files,
      }),
    };
  }

  /**
   * Checks a restore and writes its record and job (and its new database), in one
   * transaction; a dry run makes the same checks and writes nothing (undefined).
   */
  private async record(
    ctx: RequestContext,
    request: CreateRestoreRequest,
    dryRun: true,
  ): Promise<undefined>;
  private async record(
    ctx: RequestContext,
    request: CreateRestoreRequest,
    dryRun: false,
  ): Promise<{ id: string; source: DatabaseEntity }>;
  private async record(
    ctx: RequestContext,
    request: CreateRestoreRequest,
    dryRun: boolean,
  ): Promise<{ id: string; source: DatabaseEntity } | undefined> {
    const ownerId = requireUser(ctx);
    const source = await this.databases.findOwned(ctx, request);
    // The caller names the backup; its owner answers whether it is one of this database.
    if (request.kind === 'backup')
      await this.rpc.call(BACKUP_PATTERNS.restorePlan, ctx, {
        backup_id: request.backup_id ?? '',
        database_id: source.id,
      });
    const restore: NewRestore = {
      id: newId('rstr'),
      databaseId: source.id,
      kind: request.kind,
      backupId: request.backup_id ?? null,
      targetTime: request.target_time ?? null,
      targetLsn: request.target_lsn ?? null,
      targetRestorePoint: request.target_restore_point ?? null,
      targetDatabase: request.target_database ?? null,
      ...RESTORE_BEGINS,
    };
    const begin = async (manager: Transaction, target?: DatabaseEntity) => {
      await this.begin(
        manager,
        source.id,
        { ...restore, targetDatabaseId: target?.id ?? null },
        ctx,
      );
      // Every check passed; a dry run writes nothing of it.
      if (dryRun) throw new DryRunPassed();
    };
    try {
      if (request.target_database === undefined) {
        await this.restores.transaction((manager) => begin(manager));
      } else {
        // The new database counts against the quota and takes the name at once. A branch
        // (docs/api/databases.md#branches) goes into its own project, with its own size.
        const branch = request.branch;
        const projectId = branch
          ? (await this.rpc.call(PROJECT_PATTERNS.check, ctx, { id: branch.project_id })).id
          : source.projectId;
        await this.databases.insert(
          ctx,
          {
            ownerId,
            projectId,
            name: request.target_database,
            region: source.region,
            config: { ...source.config, ...branch?.config },
            ...(branch && {
              expiresAt: branch.expires_at ? new Date(branch.expires_at) : null,
              parentDatabaseId: source.id,
              parentName: source.name,
              parentProjectId: source.projectId,
            }),
          },
          'restoring',
          (manager, target) => begin(manager, target),
        );
      }
    } catch (err) {
      if (err instanceof DryRunPassed) return undefined;
      if (
        isUniqueViolation(err) &&
        (err as { constraint?: string }).constraint === 'restores_one_active'
      )
        throw inProgress(source.name);
      throw err;
    }
    return { id: restore.id, source };
  }

  /**
   * Cancels a restore before it swaps (docs/api/restores.md#cancel): the request is noted
   * on the record, under its lock, so the job either sees it before it swaps or the swap
   * came first (RESTORE_NOT_CANCELLABLE). Its job runs at once (a held-back in-place one
   * too) and undoes what was done; the answer waits for that, as long as the request may.
   */
  async cancel(ctx: RequestContext, ref: RestoreRef, kind?: RestoreKind): Promise<Restore> {
    const database = await this.databases.findOwned(ctx, ref);
    const id = ref.restore_id;
    await this.restores.transaction(async (manager) => {
      const record = isId('rstr', id)
        ? await this.restores.lockOfDatabase(manager, id, database.id, kind)
        : null;
      if (!record) throw new DomainError('RESTORE_NOT_FOUND', `Restore ${id} was not found.`);
      const ended = !['pending', 'running'].includes(record.status);
      if (ended || record.phase === 'swapping')
        throw new DomainError(
          'RESTORE_NOT_CANCELLABLE',
          ended
            ? `Restore ${id} is ${record.status}; only a restore under way can be cancelled.`
            : `Restore ${id} is swapping the restored data in; it can no longer be cancelled.`,
        );
      if (!record.cancelRequestedAt) await this.restores.noteCancel(manager, id);
    });
    this.logger.log(`restore ${id} of ${database.id}: cancel asked`);
    await this.jobs.release(id);
    await waitWithinDeadline(ctx, this.untilEnded(id));
    return toRestore(await this.restores.get(id));
  }

  /** Resolves once the restore is no longer under way, or after CANCEL_WAIT_MS. */
  private async untilEnded(id: string): Promise<void> {
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (Date.now() < deadline) {
      const record = await this.restores.find(id);
      if (!record || !['pending', 'running'].includes(record.status)) return;
      await sleep(200);
    }
  }

  /** The database's restores, newest first; of one kind only when `kind` is given. */
  async list(
    ctx: RequestContext,
    ref: DatabaseRef,
    kind?: RestoreKind,
  ): Promise<{ restores: Restore[] }> {
    const database = await this.databases.findOwned(ctx, ref);
    const rows = await this.restores.listOfDatabase(database.id, kind);
    return { restores: rows.map(toRestore) };
  }

  async get(ctx: RequestContext, ref: RestoreRef, kind?: RestoreKind): Promise<Restore> {
    const database = await this.databases.findOwned(ctx, ref);
    const record = isId('rstr', ref.restore_id)
      ? await this.restores.findOfDatabase(ref.restore_id, database.id, kind)
      : null;
    if (!record)
      throw new DomainError('RESTORE_NOT_FOUND', `Restore ${ref.restore_id} was not found.`);
    return toRestore(record);
  }

  /**
   * Inside the transaction that may also make the target database: the source must be
   * running with no restore under way on it (as source or as target), then the record and
   * its job are written, and an in-place source goes `restoring`.
   */
  private async begin(
    manager: Transaction,
    sourceId: string,
    restore: NewRestore,
    ctx: RequestContext,
  ): Promise<void> {
    const source = await this.records.lockForUpdate(manager, sourceId);
    if (!source || source.status === 'deleting')
      throw new DomainError('DATABASE_NOT_FOUND', 'The database was not found.');
    const active = await this.restores.activeOn(manager, source.id);
    if (active) throw inProgress(source.name);
    if (source.status !== 'running')
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${source.name} is ${source.status}; a restore needs it running.`,
      );
    // Not after the caller has answered 503 (the lock above may have kept us waiting).
    assertTimeLeft(ctx);
    await this.restores.insert(manager, restore);
    if (!restore.targetDatabaseId && !(await moveDatabase(manager, source.id, 'restore')))
      throw new Error(`database ${source.id} is no longer running`);
    await this.jobs.enqueue(manager, restore.id, ctx.requestId, !restore.targetDatabaseId);
  }
}

/** How long a cancel's answer waits for the restore to have stopped, at most. */
const CANCEL_WAIT_MS = 15_000;

/** Completed restores an estimate learns from, the newest first. */

/** Thrown inside a dry run's transaction once every check passed: it rolls it back. */
class DryRunPassed extends Error {}

function inProgress(name: string): DomainError {
  return new DomainError(
    'OPERATION_IN_PROGRESS',
    `A restore of database ${name} is already under way.`,
  );
}
