import { Logger } from '@nestjs/common';
import type { RequestContext, RestoreFinished } from '@pgcloud/contracts';
import { RESTORE_EVENTS } from '@pgcloud/contracts';
import type { FailedJob, JobFailure } from '@pgcloud/jobs';
import type { Outbox } from '@pgcloud/messaging';
import type { DatabaseEntity } from '../databases/database.entity.js';
import type { DatabaseJobs } from '../databases/database.jobs.js';
import type { DatabaseDriver } from '../drivers/database-driver.js';
import type { RestoreEntity } from './restore.entity.js';
import { NO_PLAN } from './restore-plan.js';
import type { RestoresRepository } from './restores.repository.js';
import { moveRestore } from './restores.repository.js';
import type { Transaction } from '../databases/databases.repository.js';
import { moveDatabase } from '../databases/databases.repository.js';

/** The kinds of PermanentJobError a restore fails with. */
export const RESTORE_FAILURES = {
  corrupt: 'corrupt-archive',
  noPlan: NO_PLAN,
  cancelled: 'cancelled',
} as const;

/** Reasons the API shows; the detail stays in the log. */
const REASONS = {
  corrupt:
    'The backup is corrupted (its checksum does not match); the database was left as it was.',
  failed: 'The restore could not be completed; the database was left as it was.',
  failedTarget: 'The restore could not be completed; the new database could not be made.',
  deleted: 'A database the restore acts on was deleted.',
  lost: 'The restore failed and the server could not be brought back; restore it again.',
} as const;

/** What a restore job carries. */
export interface RestoreJobPayload {
  restore_id: string;
  request_id: string;
}

/** The reason shown when a database a restore acts on went away meanwhile. */
export const DELETED_REASON = REASONS.deleted;

/**
 * How a restore ends other than completed: recorded failed (or cancelled), the old data put
 * back off hold (in place) or the new database's server removed, and the end announced.
 */
export class RestoreFailures {
  private readonly logger = new Logger('RestoreJobs');

  constructor(
    private readonly restores: RestoresRepository,
    private readonly driver: DatabaseDriver,
    private readonly databaseJobs: DatabaseJobs,
    private readonly outbox: Outbox,
  ) {}

  /** The job's failure handler: runs in the transaction that ends the job. */
  async failed(
    job: FailedJob<RestoreJobPayload>,
    { kind, reason }: JobFailure,
    manager: Transaction,
  ): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const found = await this.restores.parties(job.payload.restore_id, manager);
    if (!found) return;
    const { restore, source, target } = found;
    const cancelled = kind === RESTORE_FAILURES.cancelled;
    if (cancelled) this.logger.log(`restore ${restore.id} cancelled`);
    else this.logger.error(`restore ${restore.id} failed: ${reason}`);
    const inPlace = restore.targetDatabaseId === null;
    const error = this.reasonFor(kind, inPlace, source !== undefined && target !== undefined);
    const moved = await moveRestore(
      manager,
      restore.id,
      cancelled ? 'cancel' : 'fail',
      { error: cancelled ? null : error, etaSeconds: null, completedAt: new Date() },
      [restore.status === 'pending' ? 'pending' : 'running'],
    );
    if (!moved || !source || !target) return;
    const kept = await this.undo(target, inPlace);
    if (cancelled && !inPlace) {
      // Nothing of a cancelled restore stays: the database made for it goes too.
      await this.databaseJobs.markForRemoval(manager, ctx, [target.id]);
      return this.announceFinished(manager, ctx, restore, target, 'cancelled');
    }
    // The database ends `running` on its old data, or `failed` when even that could not be
    // brought back (a new database of a failed restore is `failed` in any case).
    const status = inPlace && kept ? 'running' : 'failed';
    const databaseError = status === 'running' ? null : inPlace ? REASONS.lost : error;
    await moveDatabase(manager, target.id, status === 'running' ? 'restored' : 'restoreFailed', {
      error: databaseError,
      storageFull: false,
    });
    await this.databaseJobs.announce(manager, ctx, { ...target, status, error: databaseError });
    // An in-place restore paused the WAL receiver: pitr-worker lets it go on.
    await this.announceFinished(manager, ctx, restore, target, cancelled ? 'cancelled' : 'failed');
  }

  /** Announces a restore's end, in the transaction that records it. */
  async announceFinished(
    manager: Transaction,
    ctx: RequestContext,
    restore: RestoreEntity,
    target: DatabaseEntity,
    status: RestoreFinished['status'],
  ): Promise<void> {
    await this.outbox.add(manager, RESTORE_EVENTS.finished, ctx, {
      restore_id: restore.id,
      database_id: target.id,
      project_id: target.projectId,
      in_place: restore.targetDatabaseId === null,
      status,
    });
  }

  private reasonFor(kind: string, inPlace: boolean, bothThere: boolean): string {
    if (!bothThere) return REASONS.deleted;
    if (kind === RESTORE_FAILURES.corrupt) return REASONS.corrupt;
    return inPlace ? REASONS.failed : REASONS.failedTarget;
  }

  /** Puts the old data back (in place) or removes the new server; false when that failed. */
  private async undo(target: DatabaseEntity, inPlace: boolean): Promise<boolean> {
    const serverId = target.platformServiceId;
    try {
      await this.databaseJobs.withServerLock(serverId, async () => {
        if (!inPlace) return this.driver.destroy(serverId);
        await this.driver.abandonRestore(serverId);
        await this.driver.setReadOnly(serverId, false);
      });
      return true;
    } catch (err) {
      this.logger.error(`undoing the restore on ${serverId} failed: ${String(err)}`);
      return false;
    }
  }
}
