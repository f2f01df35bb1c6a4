import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { RequestContext, RestoreFinished } from '@pgcloud/contracts';
import { PITR_PATTERNS, RESTORE_EVENTS } from '@pgcloud/contracts';
import type { FailedJob, Job, JobFailure } from '@pgcloud/jobs';
import { JobRunner, PermanentJobError, enqueue, holdJob, runNow } from '@pgcloud/jobs';
import { Outbox } from '@pgcloud/messaging';
import { checkTlsLogin } from '@pgcloud/postgres';
import { hostname } from 'node:os';
import { DataSource, IsNull, Not } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { RpcClient } from '@pgcloud/messaging';
import { ProvisionerConfig } from '../config.js';
import { SecretBox } from '../credentials/secret-box.js';
import { openCredentials } from '../credentials/sealed-credentials.js';
import { CredentialsEntity, DatabaseEntity } from '../databases/database.entity.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import type { RestoreOutcome, RestoreSpec } from '../drivers/database-driver.js';
import { CorruptArchiveError, DatabaseDriver } from '../drivers/database-driver.js';
import { RestoreEntity } from './restore.entity.js';
import { RestoreTimer } from './restore.metrics.js';
import { NO_PLAN, planOf, recoveryOf } from './restore-plan.js';
import { RestoreTracker } from './restore-progress.js';

const SCHEMA = 'provisioner';
const RESTORE = 'database.restore';
const MAX_ATTEMPTS = 3;
/** The kinds of PermanentJobError a restore fails with. */
const FAILURES = { corrupt: 'corrupt-archive', noPlan: NO_PLAN, cancelled: 'cancelled' } as const;
// How often a running restore looks whether it was cancelled.
const CANCEL_POLL_MS = 500;
// How long an in-place restore's job waits for the request to put the server on hold.
const HELD_BACK_MS = 60_000;

/** Reasons the API shows; the detail stays in the log. */
const REASONS = {
  corrupt:
    'The backup is corrupted (its checksum does not match); the database was left as it was.',
  failed: 'The restore could not be completed; the database was left as it was.',
  failedTarget: 'The restore could not be completed; the new database could not be made.',
  deleted: 'A database the restore acts on was deleted.',
  lost: 'The restore failed and the server could not be brought back; restore it again.',
} as const;

interface RestoreJobPayload {
  restore_id: string;
  request_id: string;
}

/** A restore and the databases it acts on: its source, and the one whose data it replaces. */
interface RestoreParties {
  restore: RestoreEntity;
  source?: DatabaseEntity;
  target?: DatabaseEntity;
}

/**
 * Runs restores as jobs with leases (shared DESIGN.md section 5): the live server goes on hold
 * (read-only whatever its clients send), the restored data is built and checked beside
 * it, then swapped in with the same port and credentials. A crash resumes the job; a
 * failure puts the old data back, off hold.
 */
@Injectable()
export class RestoreJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RestoreJobs.name);
  private readonly runner: JobRunner;

  constructor(
    private readonly rpc: RpcClient,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly driver: DatabaseDriver,
    private readonly secrets: SecretBox,
    private readonly databaseJobs: DatabaseJobs,
    private readonly outbox: Outbox,
    config: ProvisionerConfig,
  ) {
    this.runner = new JobRunner({
      dataSource,
      schema: SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      workerId: `provisioner-restores-${hostname()}-${process.pid}`,
      handlers: { [RESTORE]: (job) => this.run(job as Job<RestoreJobPayload>) },
      onFailed: (job, failure, manager) =>
        this.failed(job as FailedJob<RestoreJobPayload>, failure, manager),
    });
  }

  onApplicationBootstrap(): void {
    this.runner.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
  }

  wake(): void {
    this.runner.wake();
  }

  /**
   * Adds a restore's job. With `heldBack`, it waits (HELD_BACK_MS at most, should the
   * caller crash) until release(): the caller puts the live server on hold first, with no
   * job restarting it at the same moment.
   */
  async enqueue(
    manager: EntityManager,
    restoreId: string,
    requestId: string,
    heldBack = false,
  ): Promise<void> {
    await enqueue(manager, {
      schema: SCHEMA,
      type: RESTORE,
      key: restoreId,
      maxAttempts: MAX_ATTEMPTS,
      payload: { restore_id: restoreId, request_id: requestId },
      ...(heldBack ? { runAt: new Date(Date.now() + HELD_BACK_MS) } : {}),
    });
  }

  /** Lets a held-back restore job run now. */
  async release(restoreId: string): Promise<void> {
    await runNow(this.dataSource, { schema: SCHEMA, type: RESTORE, key: restoreId });
    this.runner.wake();
  }

  private async run(job: Job<RestoreJobPayload>): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const restores = this.dataSource.getRepository(RestoreEntity);
    await restores.update({ id: job.payload.restore_id, status: 'pending' }, { status: 'running' });
    const found = await this.parties(this.dataSource.manager, job.payload.restore_id);
    if (!found || found.restore.status !== 'running') return;
    const { restore, source, target } = found;
    if (!source || !target || source.status === 'deleting' || target.status === 'deleting') {
      // Deleted meanwhile: the restore ends at once, so it never holds the source's slot.
      await restores.update(
        { id: restore.id, status: 'running' },
        { status: 'failed', error: REASONS.deleted, completedAt: new Date() },
      );
      return;
    }
    // Cancelled before it began (a held-back in-place job runs at once to end it).
    if (restore.cancelRequestedAt) throw cancelledError();
    const timer = new RestoreTimer(restore);
    // Only while it runs: a failed restore keeps the phase it failed in.
    const tracker = new RestoreTracker(
      restore,
      (fields) => restores.update({ id: restore.id, status: 'running' }, fields),
      (err) => this.logger.warn(`restore ${restore.id}: progress not written: ${String(err)}`),
    );
    // A cancel stops the build wherever it is: downloads, tools and the checking server.
    const cancel = new AbortController();
    const watch = setInterval(() => {
      void this.cancelAsked(restore.id).then(
        (asked) => asked && cancel.abort(),
        () => undefined,
      );
    }, CANCEL_POLL_MS);
    try {
      await this.databaseJobs
        .withServerLock(
          target.platformServiceId,
          async (lock) => {
            const signal = AbortSignal.any([lock, cancel.signal]);
            // Under the lock: a worker that lost its lease (or the lock) must not act again.
            signal.throwIfAborted();
            await this.restoreLocked(ctx, signal, { timer, tracker }, { restore, source, target });
          },
          job.signal,
        )
        .catch((err: unknown) => {
          throw cancel.signal.aborted ? cancelledError() : err;
        });
      await this.dataSource.transaction(async (manager) => {
        // Only the attempt that still holds the job records the outcome.
        if (!(await holdJob(manager, job, SCHEMA))) throw new Error('the restore job was lost');
        await manager.update(
          RestoreEntity,
          { id: restore.id, status: 'running' },
          {
            status: 'completed',
            phase: 'done',
            etaSeconds: 0,
            completedAt: new Date(),
            error: null,
          },
        );
        await manager.update(
          DatabaseEntity,
          { id: target.id, status: 'restoring' },
          { status: 'running', storageFull: false, error: null },
        );
        await this.databaseJobs.announce(manager, ctx, { ...target, status: 'running' });
        // Running again: pitr-worker starts its archive anew, on the new data.
        await this.announceFinished(manager, ctx, restore, target, 'completed');
      });
    } catch (err) {
      timer.end('failed');
      throw err;
    } finally {
      clearInterval(watch);
    }
    timer.end('completed');
    this.logger.log(`restore ${restore.id} completed on ${target.id}`);
  }

  private async restoreLocked(
    ctx: RequestContext,
    signal: AbortSignal,
    { timer, tracker }: { timer: RestoreTimer; tracker: RestoreTracker },
    { restore, source, target }: Required<RestoreParties>,
  ): Promise<void> {
    const serverId = target.platformServiceId;
    const credentials = await this.dataSource
      .getRepository(CredentialsEntity)
      .findOneByOrFail({ databaseId: target.id });
    const { password, replicationPassword } = openCredentials(this.secrets, credentials);
    // A crash mid-swap is carried on from where it stopped; otherwise build afresh.
    const swapped = await this.driver.restoreSwapped(serverId, restore.id);
    if (target.id !== source.id && !swapped) {
      // A new database: its own server first (its certificate, port, credentials). Once the
      // restored data is swapped in it is that server, on hold: nothing to make.
      await timer.phase('create', () =>
        this.driver.create({
          serverId,
          port: target.port,
          region: target.region,
          databaseName: target.name,
          password,
          replicationPassword,
          config: target.config,
        }),
      );
    }
    if (!swapped) {
      if (target.id === source.id)
        await timer.phase('hold', () => this.driver.holdForRestore(serverId));
      signal.throwIfAborted();
      this.logger.log(`restore ${restore.id}: building ${target.id} beside`);
      // Until the build begins (its server made, on hold, planned: the archive may still
      // be catching up) the restore shows `queued`: nothing is being restored yet.
      const plan = await timer.phase('plan', () => planOf(this.rpc, ctx, restore));
      await tracker.totals(plan.base_backup_size_bytes, plan.wal_segments?.length ?? 0);
      // The data is about to change: the WAL receiver stops, and its archive starts anew
      // after the swap (an undo keeps the old one going).
      if (target.id === source.id)
        await timer.phase('pause_archive', () =>
          this.rpc.call(PITR_PATTERNS.pauseForRestore, ctx, { database_id: target.id }),
        );
      signal.throwIfAborted();
      const { walFilesApplied, stepSeconds } = await this.build({
        serverId,
        restoreId: restore.id,
        archive: { url: plan.base_backup_url, sha256: plan.base_backup_sha256 },
        ...recoveryOf(plan),
        archivedDatabaseName: source.name,
        databaseName: target.name,
        password,
        replicationPassword,
        signal,
        // downloading, replaying (a backup's own recovery too), checking the built server.
        progress: tracker.build(),
      });
      timer.steps(stepSeconds);
      // What the estimates of later dry runs are made of.
      await this.dataSource.getRepository(RestoreEntity).update(
        { id: restore.id },
        {
          downloadSeconds: stepSeconds.download,
          replaySeconds: stepSeconds.recover,
          ...(restore.kind === 'pitr' ? { walFilesApplied } : {}),
        },
      );
      if (restore.kind === 'pitr') await tracker.replayed(walFilesApplied);
    }
    signal.throwIfAborted();
    // The swap and what follows it (the login checked in place, the old data gone). From
    // here on the restore cannot be cancelled: it swaps only if no cancel came first.
    await tracker.flush();
    const swapping = await this.dataSource
      .getRepository(RestoreEntity)
      .update(
        { id: restore.id, status: 'running', cancelRequestedAt: IsNull() },
        { phase: 'swapping' },
      );
    if (swapping.affected !== 1) throw cancelledError();
    await tracker.phase('swapping');
    await timer.phase('swap', async () => {
      const endpoint = await this.driver.swapInRestore(serverId, restore.id);
      const encrypted = await checkTlsLogin({
        host: endpoint.host,
        port: endpoint.port,
        database: target.name,
        user: target.name,
        password,
        caPem: await this.driver.caCertificate(),
      });
      if (!encrypted) throw new Error('the restored server accepted a login without TLS');
      // Where the swapped-in server answers (a database restored into has had none yet).
      await this.dataSource
        .getRepository(DatabaseEntity)
        .update({ id: target.id }, { host: endpoint.host });
    });
    signal.throwIfAborted();
    await timer.phase('finish', async () => {
      await this.driver.finishRestore(serverId);
      // Checked and final: the restored server takes writes from now on.
      await this.driver.setReadOnly(serverId, false);
    });
  }

  private async build(spec: RestoreSpec): Promise<RestoreOutcome> {
    try {
      return await this.driver.buildRestore(spec);
    } catch (err) {
      if (err instanceof CorruptArchiveError)
        throw new PermanentJobError(`corrupt archive: ${err.message}`, FAILURES.corrupt);
      throw err;
    }
  }

  private async parties(
    manager: EntityManager,
    restoreId: string,
  ): Promise<RestoreParties | undefined> {
    const restore = await manager.findOneBy(RestoreEntity, { id: restoreId });
    if (!restore) return undefined;
    const byId = async (id: string) =>
      (await manager.findOneBy(DatabaseEntity, { id })) ?? undefined;
    const source = await byId(restore.databaseId);
    const target = restore.targetDatabaseId ? await byId(restore.targetDatabaseId) : source;
    return { restore, source, target };
  }

  private async failed(
    job: FailedJob<RestoreJobPayload>,
    { kind, reason }: JobFailure,
    manager: EntityManager,
  ): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const found = await this.parties(manager, job.payload.restore_id);
    if (!found) return;
    const { restore, source, target } = found;
    const cancelled = kind === FAILURES.cancelled;
    if (cancelled) this.logger.log(`restore ${restore.id} cancelled`);
    else this.logger.error(`restore ${restore.id} failed: ${reason}`);
    const inPlace = restore.targetDatabaseId === null;
    const error = this.reasonFor(kind, inPlace, source !== undefined && target !== undefined);
    const moved = await manager.update(
      RestoreEntity,
      { id: restore.id, status: restore.status === 'pending' ? 'pending' : 'running' },
      cancelled
        ? { status: 'cancelled', error: null, etaSeconds: null, completedAt: new Date() }
        : { status: 'failed', error, etaSeconds: null, completedAt: new Date() },
    );
    if (moved.affected !== 1 || !source || !target) return;
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
    await manager.update(
      DatabaseEntity,
      { id: target.id, status: 'restoring' },
      { status, error: databaseError, storageFull: false },
    );
    await this.databaseJobs.announce(manager, ctx, { ...target, status, error: databaseError });
    // An in-place restore paused the WAL receiver: pitr-worker lets it go on.
    await this.announceFinished(manager, ctx, restore, target, cancelled ? 'cancelled' : 'failed');
  }

  /** Announces a restore's end, in the transaction that records it. */
  private async announceFinished(
    manager: EntityManager,
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
    if (kind === FAILURES.corrupt) return REASONS.corrupt;
    return inPlace ? REASONS.failed : REASONS.failedTarget;
  }

  private async cancelAsked(restoreId: string): Promise<boolean> {
    return this.dataSource
      .getRepository(RestoreEntity)
      .existsBy({ id: restoreId, cancelRequestedAt: Not(IsNull()) });
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

/** How a cancelled restore's job ends: as a failure the failure handler knows. */
function cancelledError(): PermanentJobError {
  return new PermanentJobError('cancelled', FAILURES.cancelled);
}
