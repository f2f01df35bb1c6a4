import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { RequestContext } from '@pgcloud/contracts';
import type { FailedJob, Job, JobRunner } from '@pgcloud/jobs';
import { PermanentJobError, enqueue, holdJob } from '@pgcloud/jobs';
import { SecretBox } from '@pgcloud/config';
import { ProvisionerConfig } from '../config.js';
import { openCredentials } from '../credentials/sealed-credentials.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import type { Transaction } from '../databases/databases.repository.js';
import { DatabasesRepository, moveDatabase } from '../databases/databases.repository.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { assertTlsLogin } from '../drivers/tls-login.js';

const SCHEMA = 'provisioner';
const BRANCH = 'database.branch';

interface BranchJobPayload {
  database_id: string;
  request_id: string;
}

/**
 * Makes a branch of a live database (docs/api/databases.md#branches) as a job with a
 * lease, under the branch's server lock (the source takes no lock: it goes on working):
 * the driver copies the source's server, a TLS login with the branch's credentials is
 * checked, and the branch is `running` with the point it was copied at.
 */
@Injectable()
export class BranchJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BranchJobs.name);
  private readonly runner: JobRunner;

  constructor(
    private readonly databases: DatabasesRepository,
    private readonly databaseJobs: DatabaseJobs,
    private readonly driver: DatabaseDriver,
    private readonly secrets: SecretBox,
    config: ProvisionerConfig,
  ) {
    this.runner = databases.jobRunner({
      schema: SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      workerId: `provisioner-branches-${process.pid}`,
      handlers: { [BRANCH]: (job) => this.run(job as Job<BranchJobPayload>) },
      onFailed: (job, { reason }, manager) =>
        this.failed(job as FailedJob<BranchJobPayload>, reason, manager),
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

  /** Queues the copy of a new branch, in the transaction that writes its record. */
  async enqueue(tx: Transaction, databaseId: string, requestId: string): Promise<void> {
    await enqueue(tx, {
      schema: SCHEMA,
      type: BRANCH,
      key: databaseId,
      payload: { database_id: databaseId, request_id: requestId },
    });
  }

  private async run(job: Job<BranchJobPayload>): Promise<void> {
    const record = await this.databases.find(job.payload.database_id);
    if (record?.status !== 'restoring') return;
    await this.databaseJobs.withServerLock(
      record.platformServiceId,
      (signal) => this.branchLocked(job, record.id, signal),
      job.signal,
    );
  }

  private async branchLocked(
    job: Job<BranchJobPayload>,
    databaseId: string,
    signal: AbortSignal,
  ): Promise<void> {
    const record = await this.databases.find(databaseId);
    if (record?.status !== 'restoring') return; // deleted meanwhile
    const source = record.parentDatabaseId
      ? await this.databases.find(record.parentDatabaseId)
      : null;
    if (!source || source.status === 'deleting')
      throw new PermanentJobError(`its source ${record.parentName ?? '?'} was deleted`);
    const { password, replicationPassword } = openCredentials(
      this.secrets,
      await this.databases.credentialsOf(record.id),
    );
    const spec = {
      serverId: record.platformServiceId,
      port: record.port,
      region: record.region,
      databaseName: record.name,
      password,
      replicationPassword,
      config: record.config,
    };
    const { endpoint, lsn, at } = await this.driver.branch(
      spec,
      { serverId: source.platformServiceId, databaseName: source.name },
      signal,
    );
    await assertTlsLogin(this.driver, endpoint, { name: record.name, password });
    signal.throwIfAborted();
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const moved = await this.databases.transaction(async (tx) => {
      if (!(await holdJob(tx, job, SCHEMA)))
        throw new Error('the job is no longer held by this attempt');
      const running = await moveDatabase(tx, record.id, 'restored', {
        error: null,
        host: endpoint.host,
        parentLsn: lsn,
        parentAt: at,
      });
      if (running) await this.databaseJobs.announce(tx, ctx, { ...record, status: 'running' });
      return running;
    });
    if (moved) this.logger.log(`branch ${record.id} of ${source.id} running, copied at ${lsn}`);
    else await this.driver.destroy(record.platformServiceId); // deleted while it was copied
  }

  private async failed(
    job: FailedJob<BranchJobPayload>,
    reason: string,
    manager: Transaction,
  ): Promise<void> {
    const record = await this.databases.find(job.payload.database_id, manager);
    if (!record) return;
    this.logger.error(`branch ${record.id} failed: ${reason}`);
    const error = `The branch could not be copied from ${record.parentName ?? 'its source'}: ${
      reason.includes('was deleted') || reason.includes('not offered') ? reason : 'create it again'
    }.`;
    if (!(await moveDatabase(manager, record.id, 'restoreFailed', { error }))) return;
    await this.driver
      .destroy(record.platformServiceId)
      .catch((err: unknown) =>
        this.logger.warn(`cleanup of ${record.platformServiceId}: ${String(err)}`),
      );
    await this.databaseJobs.announce(manager, { requestId: job.payload.request_id }, {
      ...record,
      status: 'failed',
      error,
    } satisfies DatabaseEntity);
  }
}
