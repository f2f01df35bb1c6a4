import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type {
  DrillCheck,
  DrillFinished,
  DrillPhase,
  ProvenRestorable,
  RequestContext,
} from '@pgcloud/contracts';
import { DRILL_EVENTS } from '@pgcloud/contracts';
import type { FailedJob, Job, JobFailure, JobRunner } from '@pgcloud/jobs';
import { PermanentJobError, enqueue, holdJob, jobsTable } from '@pgcloud/jobs';
import { Outbox, RpcClient } from '@pgcloud/messaging';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProvisionerConfig } from '../config.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import type { Transaction } from '../databases/databases.repository.js';
import { DatabasesRepository } from '../databases/databases.repository.js';
import { ServerLockRepository } from '../databases/server-lock.repository.js';
import type { DrillOutcome, RestoreBuildStep } from '../drivers/database-driver.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import type { DrillEntity } from './drill.entity.js';
import { drillsTotal } from './drill.metrics.js';
import { drillPlanOf } from './drill-plan.js';
import { DrillSlots } from './drill-slots.js';
import { DrillsRepository } from './drills.repository.js';

const SCHEMA = 'provisioner';
const DRILL = 'database.drill';
/** The restores' job type: a drill waits while one of them waits for a worker. */
const RESTORE = 'database.restore';
const MAX_ATTEMPTS = 3;
// How often a drill waiting for its database's restore to end looks again.
const RESTORING_LOOK_MS = 2000;
const DELETED = 'The database was deleted before its drill ran.';
const COULD_NOT_RUN = 'The drill could not run to its end; the provisioner log has why.';
const PHASES: Record<RestoreBuildStep, DrillPhase> = {
  download: 'downloading',
  recover: 'replaying',
  check: 'checking',
};

/** A drill job's payload. */
export interface DrillJobPayload {
  drill_id: string;
  request_id: string;
}

/**
 * Runs restore drills as jobs (docs/api/drills.md): one of the deployment's drill slots
 * taken (DrillSlots), the drill planned, the driver's scratch restore checked and removed,
 * the outcome recorded with its event, and a passed drill noted on the database. A drill
 * holds no lock of the database: its owner's restores, backups and writes go on as ever.
 */
@Injectable()
export class DrillJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DrillJobs.name);
  private readonly runner: JobRunner;
  private readonly slots: DrillSlots;
  private readonly objectStoreOrigin: string;

  constructor(
    private readonly rpc: RpcClient,
    private readonly drills: DrillsRepository,
    private readonly databases: DatabasesRepository,
    private readonly driver: DatabaseDriver,
    private readonly outbox: Outbox,
    locks: ServerLockRepository,
    config: ProvisionerConfig,
  ) {
    this.objectStoreOrigin = new URL(config.S3_ENDPOINT).origin;
    this.slots = new DrillSlots(
      (name, work, options) => locks.hold(name, work, options),
      config.DRILL_CONCURRENCY,
      () => this.restoresWaiting(),
    );
    this.runner = drills.jobRunner({
      schema: SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      workerId: `provisioner-drills-${hostname()}-${process.pid}`,
      // Drills beyond the slots wait in their job for one: a worker each, no more.
      concurrency: config.DRILL_CONCURRENCY,
      handlers: { [DRILL]: (job) => this.run(job as Job<DrillJobPayload>) },
      onFailed: (job, failure, manager) =>
        this.failed(job as FailedJob<DrillJobPayload>, failure, manager),
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

  /** Adds a drill's job, in the transaction that writes its record. */
  enqueue(tx: Transaction, drillId: string, requestId: string): Promise<void> {
    return enqueueDrill(tx, drillId, requestId);
  }

  private async run(job: Job<DrillJobPayload>): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const drill = await this.drills.find(job.payload.drill_id);
    if (!drill || !(await this.drills.start(drill.id))) return;
    // An in-place restore pauses the archive: the drill waits for its end, not the reverse.
    await this.untilNotRestoring(drill.databaseId, job.signal);
    const outcome = await this.slots.run(job.signal, async (signal) => {
      const database = await this.liveDatabase(drill.databaseId);
      this.logger.log(`drill ${drill.id} of ${database.id} running`);
      const planned = await drillPlanOf(this.rpc, ctx, database.id, this.objectStoreOrigin);
      if ('failed' in planned) return { database, outcome: failedBefore(planned.failed) };
      const { plan, recovery, targetTime } = planned;
      await this.drills.advance(drill.id, {
        backupId: plan.base_backup_id,
        targetTime: targetTime ?? null,
        phase: 'downloading',
      });
      const outcome = await this.driver.drill({
        drillId: drill.id,
        serverId: database.platformServiceId,
        archive: { url: plan.base_backup_url, sha256: plan.base_backup_sha256 },
        ...(recovery ? { recovery } : {}),
        archivedDatabaseName: database.name,
        signal,
        progress: this.progress(drill.id),
      });
      return { database, outcome };
    });
    await this.finish(job, ctx, drill, outcome.database, outcome.outcome);
  }

  private async untilNotRestoring(databaseId: string, signal: AbortSignal): Promise<void> {
    while ((await this.liveDatabase(databaseId)).status === 'restoring')
      await sleep(RESTORING_LOOK_MS, undefined, { signal });
  }

  /** The drill's database, unless it is gone: then the drill cannot run (permanently). */
  private async liveDatabase(databaseId: string): Promise<DatabaseEntity> {
    const database = await this.databases.find(databaseId);
    if (!database || database.status === 'deleting')
      throw new PermanentJobError(DELETED, 'deleted');
    return database;
  }

  /** Records how the drill ended, with its event; a passed one is noted on the database. */
  private async finish(
    job: Job<DrillJobPayload>,
    ctx: RequestContext,
    drill: DrillEntity,
    database: DatabaseEntity,
    outcome: DrillOutcome,
  ): Promise<void> {
    const passed = provenBy(outcome.checks);
    const failedCheck = outcome.checks.find((check) => !check.passed);
    if (outcome.cause) this.logger.warn(`drill ${drill.id}: the restore failed: ${outcome.cause}`);
    const record = (await this.drills.find(drill.id)) ?? drill;
    await this.drills.transaction(async (tx) => {
      if (!(await holdJob(tx, job, SCHEMA))) throw new Error('the drill job was lost');
      const ended = await this.drills.end(tx, drill.id, passed ? 'pass' : 'fail', {
        checks: outcome.checks,
        error: failedCheck ? `Check ${failedCheck.name} failed: ${failedCheck.detail}` : null,
        ...(outcome.restoreSeconds > 0 ? { restoreSeconds: outcome.restoreSeconds } : {}),
        ...(outcome.replayEnd ? { targetLsn: outcome.replayEnd } : {}),
      });
      if (!ended) return;
      if (passed && record.backupId) {
        const proven: ProvenRestorable = {
          at: new Date().toISOString(),
          drill_id: drill.id,
          backup_id: record.backupId,
          ...(record.targetTime ? { target_time: record.targetTime } : {}),
          restore_seconds: outcome.restoreSeconds,
        };
        await this.drills.recordProven(tx, database.id, proven);
      }
      const payload: DrillFinished = {
        drill_id: drill.id,
        database_id: database.id,
        project_id: database.projectId,
        status: passed ? 'passed' : 'failed',
        checks: outcome.checks,
        ...(record.backupId ? { backup_id: record.backupId } : {}),
      };
      if (passed) await this.outbox.add(tx, DRILL_EVENTS.passed, ctx, payload);
      else await this.outbox.add(tx, DRILL_EVENTS.failed, ctx, payload);
    });
    drillsTotal.inc({ kind: drill.kind, outcome: passed ? 'passed' : 'failed' });
    this.logger.log(`drill ${drill.id} of ${database.id} ${passed ? 'passed' : 'failed'}`);
  }

  /**
   * A drill given up on (its attempts ran out, its database went): recorded failed, with
   * its event unless the database is gone; its scratch server removed.
   */
  private async failed(
    job: FailedJob<DrillJobPayload>,
    { kind, reason }: JobFailure,
    tx: Transaction,
  ): Promise<void> {
    const drill = await this.drills.find(job.payload.drill_id);
    if (!drill) return;
    this.logger.error(`drill ${drill.id} failed: ${reason}`);
    const deleted = kind === 'deleted';
    const ended = await this.drills.end(tx, drill.id, 'fail', {
      checks: drill.checks,
      error: deleted ? DELETED : COULD_NOT_RUN,
    });
    const database = await this.databases.find(drill.databaseId, tx);
    // The local driver finds a scratch server by the drill's id alone, its database gone or not.
    await this.driver
      .discardDrill(drill.id, database?.platformServiceId ?? '')
      .catch((err: unknown) => this.logger.warn(`drill ${drill.id} not removed: ${String(err)}`));
    if (!ended || deleted || !database) return;
    const ctx: RequestContext = { requestId: job.payload.request_id };
    await this.outbox.add(tx, DRILL_EVENTS.failed, ctx, {
      drill_id: drill.id,
      database_id: database.id,
      project_id: database.projectId,
      status: 'failed',
      checks: drill.checks,
      error: COULD_NOT_RUN,
      ...(drill.backupId ? { backup_id: drill.backupId } : {}),
    });
    drillsTotal.inc({ kind: drill.kind, outcome: 'failed' });
  }

  /** The drill's phase as its build moves on (a write per step, never awaited). */
  private progress(drillId: string) {
    const write = (phase: DrillPhase) =>
      void this.drills
        .advance(drillId, { phase })
        .catch((err: unknown) =>
          this.logger.warn(`drill ${drillId}: phase not written: ${String(err)}`),
        );
    return {
      step: (step: RestoreBuildStep) => write(PHASES[step]),
      downloaded: () => undefined,
    };
  }

  /** Whether a user's restore waits for a worker (queued and due, not taken yet). */
  private async restoresWaiting(): Promise<boolean> {
    return this.drills.jobsWaiting(jobsTable(SCHEMA), RESTORE);
  }
}

/** Adds a drill's job, in the transaction that writes its record. */
export async function enqueueDrill(
  tx: Transaction,
  drillId: string,
  requestId: string,
): Promise<void> {
  await enqueue(tx, {
    schema: SCHEMA,
    type: DRILL,
    key: drillId,
    maxAttempts: MAX_ATTEMPTS,
    payload: { drill_id: drillId, request_id: requestId } satisfies DrillJobPayload,
  });
}

/** A drill proves its backup restorable when it ran its checks and every one passed. */
export function provenBy(checks: readonly DrillCheck[]): boolean {
  const ran = new Set(checks.map((check) => check.name));
  return ran.has('consistent') && ran.has('amcheck') && checks.every((check) => check.passed);
}

/** A drill that stopped at its plan: the check that failed, nothing restored. */
function failedBefore(check: DrillCheck): DrillOutcome {
  return { checks: [check], restoreSeconds: 0, walFilesApplied: 0 };
}
