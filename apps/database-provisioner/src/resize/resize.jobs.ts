import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { DatabaseConfig, RequestContext } from '@pgcloud/contracts';
import type { FailedJob, Job, JobRunner } from '@pgcloud/jobs';
import { enqueue, holdJob } from '@pgcloud/jobs';
import { SecretBox } from '@pgcloud/config';
import { ProvisionerConfig } from '../config.js';
import { openCredentials } from '../credentials/sealed-credentials.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import type { Transaction } from '../databases/databases.repository.js';
import { DatabasesRepository, moveDatabase } from '../databases/databases.repository.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { assertTlsLogin } from '../drivers/tls-login.js';
import { storageAfterResize } from './resize-rules.js';

const SCHEMA = 'provisioner';
const RESIZE = 'database.resize';

/** What a resize job carries: the record, and the size it had before (to go back to). */
interface ResizeJobPayload {
  database_id: string;
  request_id: string;
  previous: DatabaseConfig;
}

/**
 * Applies a resize (docs/api/databases.md#resizing) as a job with a lease, under the
 * server's lock: the driver gives the server its new size (one restart), a TLS login with
 * the stored credentials is checked, and the database is `running` again. A fenced server
 * whose data fits the new size comes back writable at that restart; one that was read-only
 * at its limit is writable again once the data is under 90% of the new one.
 */
@Injectable()
export class ResizeJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ResizeJobs.name);
  private readonly runner: JobRunner;

  constructor(
    private readonly databases: DatabasesRepository,
    private readonly databaseJobs: DatabaseJobs,
    private readonly driver: DatabaseDriver,
    private readonly secrets: SecretBox,
    private readonly config: ProvisionerConfig,
  ) {
    this.runner = databases.jobRunner({
      schema: SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      workerId: `provisioner-resizes-${process.pid}`,
      handlers: { [RESIZE]: (job) => this.run(job as Job<ResizeJobPayload>) },
      onFailed: (job, { reason }, manager) =>
        this.failed(job as FailedJob<ResizeJobPayload>, reason, manager),
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

  /** Queues the resize of a database moved to `resizing`, in the transaction that moved it. */
  async enqueue(
    tx: Transaction,
    databaseId: string,
    previous: DatabaseConfig,
    requestId: string,
  ): Promise<void> {
    await enqueue(tx, {
      schema: SCHEMA,
      type: RESIZE,
      key: databaseId,
      payload: { database_id: databaseId, request_id: requestId, previous },
    });
  }

  /** Queues again the resize of a record left `resizing` (reconcile; deduplicated). */
  async requeue(record: DatabaseEntity): Promise<void> {
    await this.databases.enqueueJob({
      schema: SCHEMA,
      type: RESIZE,
      key: record.id,
      payload: { database_id: record.id, request_id: 'reconcile', previous: record.config },
    });
  }

  private async run(job: Job<ResizeJobPayload>): Promise<void> {
    const record = await this.databases.find(job.payload.database_id);
    if (record?.status !== 'resizing') return;
    await this.databaseJobs.withServerLock(
      record.platformServiceId,
      (signal) => this.resizeLocked(job, record.id, signal),
      job.signal,
    );
  }

  private async resizeLocked(
    job: Job<ResizeJobPayload>,
    databaseId: string,
    signal: AbortSignal,
  ): Promise<void> {
    const record = await this.databases.find(databaseId);
    if (record?.status !== 'resizing') return; // deleted meanwhile: its removal takes the rest
    const serverId = record.platformServiceId;
    const used = await this.driver.usedBytes(serverId);
    const { unfence, writable, fields } = storageAfterResize(record, used, {
      percent: this.config.STORAGE_FENCE_GRACE_PERCENT,
      minMib: this.config.STORAGE_FENCE_GRACE_MIN_MIB,
    });
    await this.driver.resize(serverId, record.config, { unfence, signal });
    if (writable) await this.driver.setReadOnly(serverId, false);
    await this.checkLogin(record);
    signal.throwIfAborted();
    const ctx: RequestContext = { requestId: job.payload.request_id };
    await this.databases.transaction(async (tx) => {
      // Only for the attempt that still holds the job: one that lost it writes nothing.
      if (!(await holdJob(tx, job, SCHEMA)))
        throw new Error('the job is no longer held by this attempt');
      if (await moveDatabase(tx, record.id, 'resized', { error: null, ...fields }))
        await this.databaseJobs.announce(tx, ctx, { ...record, status: 'running' });
    });
    const { cpu, memory, storage } = record.config;
    this.logger.log(
      `database ${record.id} runs with cpu ${cpu}, memory ${memory} GiB, storage ${storage} GiB` +
        (unfence ? ' (its storage fence lifted)' : ''),
    );
  }

  /** The server takes a TLS login with the stored credentials, as after provisioning. */
  private async checkLogin(record: DatabaseEntity): Promise<void> {
    const { password } = openCredentials(
      this.secrets,
      await this.databases.credentialsOf(record.id),
    );
    const endpoint = await this.driver.ensureRunning(record.platformServiceId);
    await assertTlsLogin(this.driver, endpoint, { name: record.name, password });
  }

  /**
   * A resize that could not be applied: the server goes back to the size it had, as far as
   * it can, and the database to `running` with it (the log says why).
   */
  private async failed(
    job: FailedJob<ResizeJobPayload>,
    reason: string,
    manager: Transaction,
  ): Promise<void> {
    const record = await this.databases.find(job.payload.database_id, manager);
    if (record?.status !== 'resizing') return;
    const { previous } = job.payload;
    this.logger.error(`resizing ${record.id} failed: ${reason}; back to its previous size`);
    await this.driver
      .resize(record.platformServiceId, previous, { unfence: false })
      .catch((err: unknown) =>
        this.logger.error(`${record.id} could not go back to its previous size: ${String(err)}`),
      );
    if (await moveDatabase(manager, record.id, 'resized', { config: previous }))
      await this.databaseJobs.announce(
        manager,
        { requestId: job.payload.request_id },
        { ...record, status: 'running', config: previous },
      );
  }
}
