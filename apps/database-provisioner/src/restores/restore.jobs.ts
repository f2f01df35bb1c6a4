import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { RequestContext } from '@pgcloud/contracts';
import { PITR_PATTERNS } from '@pgcloud/contracts';
import type { FailedJob, Job, JobRunner } from '@pgcloud/jobs';
import { PermanentJobError, enqueue, holdJob } from '@pgcloud/jobs';
import { Outbox } from '@pgcloud/messaging';
import { hostname } from 'node:os';
import { RpcClient } from '@pgcloud/messaging';
import { ProvisionerConfig } from '../config.js';
import { SecretBox } from '@pgcloud/config';
import { openCredentials } from '../credentials/sealed-credentials.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import type { RestoreOutcome, RestoreSpec } from '../drivers/database-driver.js';
import { assertTlsLogin } from '../drivers/tls-login.js';
import { CorruptArchiveError, DatabaseDriver } from '../drivers/database-driver.js';
import type { RestoreJobPayload } from './restore-failures.js';
import { DELETED_REASON, RESTORE_FAILURES, RestoreFailures } from './restore-failures.js';
import { RestoreTimer } from './restore.metrics.js';
import { assertLinksAt, planOf, recoveryOf } from './restore-plan.js';
import { RestoreTracker } from './restore-progress.js';
import type { RestoreParties } from './restores.repository.js';
import { RestoresRepository, moveRestore } from './restores.repository.js';
import type { Transaction } from '../databases/databases.repository.js';
import { DatabasesRepository, moveDatabase } from '../databases/databases.repository.js';

const SCHEMA = 'provisioner';
const RESTORE = 'database.restore';
const MAX_ATTEMPTS = 3;
// How often a running restore looks whether it was cancelled.
const CANCEL_POLL_MS = 500;
// How long an in-place restore's job waits for the request to put the server on hold.
const HELD_BACK_MS = 60_000;

/**
 * Runs restores as jobs with leases (docs/architecture.md#restores-inside): the live server goes on
 * hold (read-only whatever its clients send), the restored data is built and checked beside it,
 * then swapped in with the same port and credentials. A crash resumes the job; a failure puts the
 * old data back, off hold.
 */
@Injectable()
export class RestoreJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RestoreJobs.name);
  private readonly runner: JobRunner;
  private readonly failures: RestoreFailures;
  /** The only origin a plan's links may point to. */
  private readonly objectStoreOrigin: string;
  private readonly progressIntervalMs: number;

  constructor(
    private readonly rpc: RpcClient,
    private readonly restores: RestoresRepository,
    private readonly databases: DatabasesRepository,
    private readonly driver: DatabaseDriver,
    private readonly secrets: SecretBox,
    private readonly databaseJobs: DatabaseJobs,
    private readonly outbox: Outbox,
    config: ProvisionerConfig,
  ) {
    this.failures = new RestoreFailures(restores, driver, databaseJobs, outbox);
    this.objectStoreOrigin = new URL(config.S3_ENDPOINT).origin;
    this.progressIntervalMs = config.RESTORE_PROGRESS_INTERVAL_MS;
    this.runner = restores.jobRunner({
      schema: SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      workerId: `provisioner-restores-${hostname()}-${process.pid}`,
      handlers: { [RESTORE]: (job) => this.run(job as Job<RestoreJobPayload>) },
      onFailed: (job, failure, manager) =>
        this.failures.failed(job as FailedJob<RestoreJobPayload>, failure, manager),
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
    manager: Transaction,
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
    await this.restores.runJobNow({ schema: SCHEMA, type: RESTORE, key: restoreId });
    this.runner.wake();
  }

  private async run(job: Job<RestoreJobPayload>): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    await this.restores.move(job.payload.restore_id, 'start');
    const found = await this.restores.parties(job.payload.restore_id);
    if (!found || found.restore.status !== 'running') return;
    const { restore, source, target } = found;
    if (!source || !target || source.status === 'deleting' || target.status === 'deleting') {
      // Deleted meanwhile: the restore ends at once, so it never holds the source's slot.
      await this.restores.move(restore.id, 'fail', {
        error: DELETED_REASON,
        completedAt: new Date(),
      });
      return;
    }
    // Cancelled before it began (a held-back in-place job runs at once to end it).
    if (restore.cancelRequestedAt) throw cancelledError();
    const timer = new RestoreTimer(restore);
    // Only while it runs: a failed restore keeps the phase it failed in.
    const tracker = new RestoreTracker(
      restore,
      (fields) => this.restores.advance(restore.id, fields),
      (err) => this.logger.warn(`restore ${restore.id}: progress not written: ${String(err)}`),
      Date.now,
      this.progressIntervalMs,
    );
    // A cancel stops the build wherever it is: downloads, tools and the checking server.
    const cancel = new AbortController();
    const watch = setInterval(() => {
      void this.restores.cancelAsked(restore.id).then(
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
      await this.restores.transaction(async (manager) => {
        // Only the attempt that still holds the job records the outcome.
        if (!(await holdJob(manager, job, SCHEMA))) throw new Error('the restore job was lost');
        await moveRestore(manager, restore.id, 'complete', {
          phase: 'done',
          etaSeconds: 0,
          completedAt: new Date(),
          error: null,
        });
        // Restored data is measured anew: a fence lifts, and comes back if it is still past.
        await moveDatabase(manager, target.id, 'restored', {
          storageFull: false,
          storageFencedAt: null,
          error: null,
        });
        await this.databaseJobs.announce(manager, ctx, { ...target, status: 'running' });
        // Running again: pitr-worker starts its archive anew, on the new data.
        await this.failures.announceFinished(manager, ctx, restore, target, 'completed');
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
    const credentials = await this.databases.credentialsOf(target.id);
    const { password, replicationPassword } = openCredentials(this.secrets, credentials);
    // A crash mid-swap is carried on from where it stopped; otherwise build afresh.
    if (!(await this.driver.restoreSwapped(serverId, restore.id)))
      await this.buildBeside(
        ctx,
        signal,
        { timer, tracker },
        { restore, source, target },
        {
          password,
          replicationPassword,
        },
      );
    signal.throwIfAborted();
    // The swap and what follows it (the login checked in place, the old data gone). From
    // here on the restore cannot be cancelled: it swaps only if no cancel came first.
    await tracker.flush();
    const swapping = await this.restores.advanceUnlessCancelled(restore.id, { phase: 'swapping' });
    if (!swapping) throw cancelledError();
    await tracker.phase('swapping');
    await timer.phase('swap', async () => {
      const endpoint = await this.driver.swapInRestore(serverId, restore.id);
      await assertTlsLogin(this.driver, endpoint, { name: target.name, password });
      // Where the swapped-in server answers (a database restored into has had none yet).
      await this.databases.setHost(target.id, endpoint.host);
    });
    signal.throwIfAborted();
    await timer.phase('finish', async () => {
      await this.driver.finishRestore(serverId);
      // Checked and final: the restored server takes writes from now on.
      await this.driver.setReadOnly(serverId, false);
    });
  }

  /**
   * Builds and checks the restored data beside the server: in place with the live server on
   * hold, or into a new database while its server is made (the build waits for that server
   * only where it needs its files).
   */
  private async buildBeside(
    ctx: RequestContext,
    signal: AbortSignal,
    { timer, tracker }: { timer: RestoreTimer; tracker: RestoreTracker },
    { restore, source, target }: Required<RestoreParties>,
    { password, replicationPassword }: { password: string; replicationPassword: string },
  ): Promise<void> {
    const serverId = target.platformServiceId;
    const inPlace = target.id === source.id;
    // A new database: its own server (its certificate, port, credentials). Once the restored
    // data is swapped in it is that server, on hold.
    const creating = inPlace
      ? undefined
      : timer.phase('create', () =>
          this.driver.create(
            {
              serverId,
              port: target.port,
              region: target.region,
              databaseName: target.name,
              password,
              replicationPassword,
              config: target.config,
            },
            signal,
          ),
        );
    // A server that could not be made stops the build at once.
    const notMade = new AbortController();
    creating?.catch(() => notMade.abort());
    const building = AbortSignal.any([signal, notMade.signal]);
    try {
      if (inPlace) await timer.phase('hold', () => this.driver.holdForRestore(serverId));
      building.throwIfAborted();
      this.logger.log(`restore ${restore.id}: building ${target.id} beside`);
      // Until the build begins (on hold, planned: the archive may still be catching up) the
      // restore shows `queued`: nothing is being restored yet.
      const plan = await timer.phase('plan', () => planOf(this.rpc, ctx, restore));
      // Checked before anything is paused or written: a target beyond its grammar, or a
      // link to anywhere but the object store, fails here.
      assertLinksAt(plan, this.objectStoreOrigin);
      const recovery = recoveryOf(plan);
      await tracker.totals(plan.base_backup_size_bytes, plan.wal_segments?.length ?? 0);
      // The data is about to change: the WAL receiver stops, and its archive starts anew
      // after the swap (an undo keeps the old one going).
      if (inPlace)
        await timer.phase('pause_archive', () =>
          this.rpc.call(PITR_PATTERNS.pauseForRestore, ctx, { database_id: target.id }),
        );
      building.throwIfAborted();
      const { walFilesApplied, stepSeconds, copiedPoint } = await this.build({
        serverId,
        restoreId: restore.id,
        archive: { url: plan.base_backup_url, sha256: plan.base_backup_sha256 },
        ...recovery,
        archivedDatabaseName: source.name,
        databaseName: target.name,
        password,
        replicationPassword,
        signal: building,
        ...(creating ? { serverMade: creating } : {}),
        // downloading, replaying (a backup's own recovery too), checking the built server.
        progress: tracker.build(),
      });
      await creating;
      timer.steps(stepSeconds);
      // What the estimates of later dry runs are made of.
      await this.restores.recordStepSeconds(restore.id, {
        downloadSeconds: stepSeconds.download,
        replaySeconds: stepSeconds.recover,
        ...(restore.kind === 'pitr' ? { walFilesApplied } : {}),
      });
      if (restore.kind === 'pitr') await tracker.replayed(walFilesApplied);
      // A branch at a past point records the point it holds (docs/api/databases.md#branches).
      if (target.parentDatabaseId && copiedPoint)
        await this.databases.setParentPoint(target.id, copiedPoint.lsn, copiedPoint.at);
    } catch (err) {
      // Nothing is undone under a server still being made, and its failure is the reason.
      const createFailure = await creating?.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      throw createFailure ?? err;
    }
  }

  private async build(spec: RestoreSpec): Promise<RestoreOutcome> {
    try {
      return await this.driver.buildRestore(spec);
    } catch (err) {
      if (err instanceof CorruptArchiveError)
        throw new PermanentJobError(`corrupt archive: ${err.message}`, RESTORE_FAILURES.corrupt);
      throw err;
    }
  }
}

/** How a cancelled restore's job ends: as a failure the failure handler knows. */
function cancelledError(): PermanentJobError {
  return new PermanentJobError('cancelled', RESTORE_FAILURES.cancelled);
}
