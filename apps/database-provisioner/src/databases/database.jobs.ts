import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { DatabaseStatusChanged, RequestContext } from '@pgcloud/contracts';
import { DATABASE_EVENTS } from '@pgcloud/contracts';
import type { FailedJob, Job, JobRunner } from '@pgcloud/jobs';
import { enqueue, holdJob } from '@pgcloud/jobs';
import { Outbox } from '@pgcloud/messaging';
import { ProvisionerConfig } from '../config.js';
import { SecretBox } from '@pgcloud/config';
import { openCredentials } from '../credentials/sealed-credentials.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { assertTlsLogin } from '../drivers/tls-login.js';
import { RestoresRepository } from '../restores/restores.repository.js';
import type { DatabaseEntity } from './database.entity.js';
import type { Transaction } from './databases.repository.js';
import { DatabasesRepository, moveDatabase, removeDatabases } from './databases.repository.js';
import { ServerLockRepository } from './server-lock.repository.js';

const SCHEMA = 'provisioner';
const PROVISION = 'database.provision';
const REMOVE = 'database.remove';
/** What a provisioning or removal job carries: the record's id, nothing secret. */
interface DatabaseJobPayload {
  database_id: string;
  request_id: string;
}

/**
 * The long work on databases, as jobs with leases (libs/jobs): provisioning (server made,
 * then `running` only after a TLS login with the stored credentials) and removal.
 */
@Injectable()
export class DatabaseJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseJobs.name);
  private readonly runner: JobRunner;

  constructor(
    private readonly databases: DatabasesRepository,
    private readonly restores: RestoresRepository,
    private readonly locks: ServerLockRepository,
    private readonly driver: DatabaseDriver,
    private readonly secrets: SecretBox,
    private readonly outbox: Outbox,
    config: ProvisionerConfig,
  ) {
    this.runner = databases.jobRunner({
      schema: SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      workerId: `provisioner-${process.pid}`,
      handlers: {
        [PROVISION]: (job) => this.provision(job as Job<DatabaseJobPayload>),
        [REMOVE]: (job) => this.remove(job as Job<DatabaseJobPayload>),
      },
      onFailed: (job, { reason }, manager) =>
        this.failed(job as FailedJob<DatabaseJobPayload>, reason, manager),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.driver.prepare();
    this.runner.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
  }

  /** Starts on new work at once rather than on the next poll. */
  wake(): void {
    this.runner.wake();
  }

  /** Queues the provisioning of a new record, in the transaction that writes it. */
  async enqueueProvision(manager: Transaction, databaseId: string, requestId = '-'): Promise<void> {
    await enqueue(manager, {
      schema: SCHEMA,
      type: PROVISION,
      key: databaseId,
      payload: { database_id: databaseId, request_id: requestId },
    });
  }

  /** Takes databases out of the API at once and queues the removal of their servers. */
  async scheduleRemoval(ctx: RequestContext, databaseIds: string[]): Promise<void> {
    if (databaseIds.length === 0) return;
    await this.databases.transaction((manager) => this.markForRemoval(manager, ctx, databaseIds));
    this.logger.log(`removing ${databaseIds.join(', ')}`);
    this.wake();
  }

  /**
   * scheduleRemoval in the caller's transaction: each database not already leaving moves
   * to `deleting`, its removal is queued, and database.deleted is announced, whose
   * listeners remove its backups and WAL archive. Answers the databases it moved.
   */
  async markForRemoval(
    manager: Transaction,
    ctx: RequestContext,
    databaseIds: string[],
  ): Promise<{ id: string; project_id: string }[]> {
    if (databaseIds.length === 0) return [];
    // One statement, so of two deletes at once only one moves a record and announces it.
    const moved = await removeDatabases(manager, databaseIds);
    for (const { id, project_id } of moved) {
      await enqueue(manager, {
        schema: SCHEMA,
        type: REMOVE,
        key: id,
        payload: { database_id: id, request_id: ctx.requestId },
      });
      await this.outbox.add(manager, DATABASE_EVENTS.deleted, ctx, {
        database_id: id,
        project_id,
      });
    }
    return moved;
  }

  /** Queues again whatever a record still needs (reconcile after a crash; deduplicated). */
  async requeue(record: DatabaseEntity): Promise<void> {
    const type = record.status === 'deleting' ? REMOVE : PROVISION;
    await this.databases.enqueueJob({
      schema: SCHEMA,
      type,
      key: record.id,
      payload: { database_id: record.id, request_id: 'reconcile' },
    });
  }

  /** Announces the record's status, in the transaction that moved it there. */
  async announce(manager: Transaction, ctx: RequestContext, record: DatabaseEntity): Promise<void> {
    const payload: DatabaseStatusChanged = {
      database_id: record.id,
      project_id: record.projectId,
      status: record.status === 'deleting' ? 'failed' : record.status,
    };
    if (record.error) payload.error = record.error;
    await this.outbox.add(manager, DATABASE_EVENTS.statusChanged, ctx, payload);
  }

  /**
   * Runs work on one server while holding its lock (a PostgreSQL advisory lock on the
   * metadata database), so provisioning, removal, restores and reconcile never act on it
   * at once. The lock lives on one session: `work`'s signal is aborted when that session
   * is lost (see server-lock.repository.ts), and when `signal` (a job's) is, so work stops
   * then.
   */
  async withServerLock<T>(
    serverId: string,
    work: (signal: AbortSignal) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    return (await this.locks.hold(serverId, work, { wait: true, signal })) as T;
  }

  /** Like withServerLock, but answers undefined at once when someone else holds the lock. */
  tryWithServerLock<T>(
    serverId: string,
    work: (signal: AbortSignal) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T | undefined> {
    return this.locks.hold(serverId, work, { wait: false, signal });
  }

  private async provision(job: Job<DatabaseJobPayload>): Promise<void> {
    const record = await this.databases.find(job.payload.database_id);
    if (!record || record.status !== 'provisioning') return;
    await this.withServerLock(
      record.platformServiceId,
      (signal) => this.provisionLocked(job, record, signal),
      job.signal,
    );
  }

  /** `signal`: the job's lease or the server lock was lost; the driver stops between steps. */
  private async provisionLocked(
    job: Job<DatabaseJobPayload>,
    stale: DatabaseEntity,
    signal: AbortSignal,
  ): Promise<void> {
    const ctx = { requestId: job.payload.request_id };
    const record = await this.databases.find(stale.id);
    if (!record || record.status !== 'provisioning') return;
    const credentials = await this.databases.credentialsOf(record.id);
    const { password, replicationPassword } = openCredentials(this.secrets, credentials);
    const endpoint = await this.driver.create(
      {
        serverId: record.platformServiceId,
        port: record.port,
        region: record.region,
        databaseName: record.name,
        password,
        replicationPassword,
        config: record.config,
      },
      signal,
    );
    await assertTlsLogin(this.driver, endpoint, { name: record.name, password });
    signal.throwIfAborted();
    // Only for the attempt that still holds the job: one that lost it writes nothing.
    const moved = await this.databases.transaction(async (manager) => {
      if (!(await holdJob(manager, job, SCHEMA)))
        throw new Error('the job is no longer held by this attempt');
      const running = await moveDatabase(manager, record.id, 'provisioned', {
        error: null,
        host: endpoint.host,
      });
      if (running) await this.announce(manager, ctx, { ...record, status: 'running' });
      return running;
    });
    if (moved) {
      this.logger.log(`database ${record.id} running at ${endpoint.host}:${endpoint.port}`);
    } else {
      // Deleted while it was being made; the removal waits for this lock, then finds the
      // server, but removing it here too leaves nothing to chance.
      this.logger.log(`database ${record.id} was deleted while provisioning`);
      await this.driver.destroy(record.platformServiceId);
    }
  }

  private async remove(job: Job<DatabaseJobPayload>): Promise<void> {
    const record = await this.databases.find(job.payload.database_id);
    if (!record) return;
    await this.withServerLock(
      record.platformServiceId,
      () => this.driver.destroy(record.platformServiceId),
      job.signal,
    );
    // The passwords leave with the server: nothing after this point logs in to it.
    await this.databases.deleteCredentials(record.id);
    // Its backups and WAL archive are not this job's: backup-service and pitr-worker
    // remove them on database.deleted, announced when the record moved to `deleting`.
    await this.databases.transaction(async (manager) => {
      // Its restores (as source) go with it; a restore that built it stays in its source's list.
      await this.restores.deleteOfDatabase(manager, record.id);
      await this.databases.deleteRemoved(manager, record.id);
    });
    this.logger.log(`database ${record.id} and its server are gone`);
  }

  private async failed(
    job: FailedJob<DatabaseJobPayload>,
    reason: string,
    manager: Transaction,
  ): Promise<void> {
    if (job.type !== PROVISION) {
      this.logger.error(`${job.type} of ${job.key} failed for good: ${reason}`);
      return;
    }
    const record = await this.databases.find(job.payload.database_id, manager);
    if (!record) return;
    // The API shows a short reason; the detail (tool output, paths) stays in the log.
    const error = 'The server could not be made ready; create the database again.';
    this.logger.error(`provisioning ${record.id} failed: ${reason}`);
    const moved = await moveDatabase(manager, record.id, 'provisionFailed', { error });
    if (!moved) return; // it moved on (running, deleting): its server is not ours to remove
    // A failed database holds no data; its server would only take a port and memory.
    await this.driver
      .destroy(record.platformServiceId)
      .catch((err: unknown) =>
        this.logger.warn(`cleanup of ${record.platformServiceId}: ${String(err)}`),
      );
    await this.announce(
      manager,
      { requestId: job.payload.request_id },
      { ...record, status: 'failed', error },
    );
  }
}
