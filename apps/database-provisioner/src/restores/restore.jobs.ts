import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { RequestContext } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { FailedJob, Job } from '@pgcloud/jobs';
import { JobRunner, PermanentJobError, enqueue } from '@pgcloud/jobs';
import { checkTlsLogin } from '@pgcloud/postgres';
import { hostname } from 'node:os';
import { DataSource } from 'typeorm';
import type { EntityManager } from 'typeorm';
import { BackupsClient } from '../backups-client/backups.client.js';
import { ProvisionerConfig } from '../config.js';
import { SecretBox } from '../credentials/secret-box.js';
import { CredentialsEntity, DatabaseEntity } from '../databases/database.entity.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import { CorruptArchiveError, DatabaseDriver } from '../drivers/database-driver.js';
import { RestoreEntity } from './restore.entity.js';

const SCHEMA = 'provisioner';
const RESTORE = 'database.restore';
const MAX_ATTEMPTS = 3;
const CORRUPT = 'corrupt archive: ';

/** Reasons the API shows; the detail stays in the log. */
const REASONS = {
  corrupt:
    'The backup is corrupted (its checksum does not match); the database was left as it was.',
  failed: 'The restore could not be completed; the database was left as it was.',
  failedTarget: 'The restore could not be completed; the new database could not be made.',
} as const;

interface RestoreJobPayload {
  restore_id: string;
  request_id: string;
}

/** The databases a restore acts on: its source, and the one whose data it replaces. */
interface RestoreParties {
  restore: RestoreEntity;
  source: DatabaseEntity;
  target: DatabaseEntity;
}

/**
 * Runs restores as jobs with leases (DESIGN.md section 5): the live server goes
 * read-only, the restored data is built and checked beside it, then swapped in with the
 * same port and credentials. A crash resumes the job; a failure puts the old data back.
 */
@Injectable()
export class RestoreJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RestoreJobs.name);
  private readonly runner: JobRunner;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly driver: DatabaseDriver,
    private readonly secrets: SecretBox,
    private readonly backups: BackupsClient,
    private readonly databaseJobs: DatabaseJobs,
    config: ProvisionerConfig,
  ) {
    this.runner = new JobRunner({
      dataSource,
      schema: SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      workerId: `provisioner-restores-${hostname()}-${process.pid}`,
      handlers: { [RESTORE]: (job) => this.run(job as Job<RestoreJobPayload>) },
      onFailed: (job, reason, manager) =>
        this.failed(job as FailedJob<RestoreJobPayload>, reason, manager),
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

  async enqueue(manager: EntityManager, restoreId: string, requestId: string): Promise<void> {
    await enqueue(manager, {
      schema: SCHEMA,
      type: RESTORE,
      key: restoreId,
      maxAttempts: MAX_ATTEMPTS,
      payload: { restore_id: restoreId, request_id: requestId },
    });
  }

  private async run(job: Job<RestoreJobPayload>): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const restores = this.dataSource.getRepository(RestoreEntity);
    await restores.update({ id: job.payload.restore_id, status: 'pending' }, { status: 'running' });
    const parties = await this.parties(this.dataSource.manager, job.payload.restore_id);
    if (!parties || parties.restore.status !== 'running') return;
    const { restore, source, target } = parties;
    const serverId = target.platformServiceId;
    const credentials = await this.dataSource
      .getRepository(CredentialsEntity)
      .findOneByOrFail({ databaseId: target.id });
    const password = this.secrets.open(credentials.passwordSealed);
    await this.databaseJobs.withServerLock(serverId, async () => {
      if (target.id !== source.id) {
        // A new database: its own server first (its certificate, port, credentials).
        await this.driver.create({
          serverId,
          port: target.port,
          databaseName: target.name,
          password,
          replicationPassword: this.secrets.open(credentials.replicationPasswordSealed),
          config: target.config,
        });
      }
      // A crash mid-swap is carried on from where it stopped; otherwise build afresh.
      if (!(await this.driver.restoreSwapped(serverId))) {
        if (target.id === source.id) {
          await this.driver.ensureRunning(serverId);
          await this.driver.setReadOnly(serverId, true);
        }
        this.logger.log(`[${ctx.requestId}] restore ${restore.id}: building ${target.id} beside`);
        await this.build(ctx, restore, source, target, password, credentials);
      }
      const endpoint = await this.driver.swapInRestore(serverId);
      const encrypted = await checkTlsLogin({
        host: endpoint.host,
        port: endpoint.port,
        database: target.name,
        user: target.name,
        password,
        caPem: await this.driver.caCertificate(),
      });
      if (!encrypted) throw new Error('the restored server accepted a login without TLS');
      await this.driver.finishRestore(serverId);
    });
    await this.dataSource.transaction(async (manager) => {
      await manager.update(
        RestoreEntity,
        { id: restore.id, status: 'running' },
        { status: 'completed', completedAt: new Date(), error: null },
      );
      await manager.update(
        DatabaseEntity,
        { id: target.id, status: 'restoring' },
        { status: 'running', storageFull: false, error: null },
      );
    });
    this.logger.log(`[${ctx.requestId}] restore ${restore.id} completed on ${target.id}`);
    await this.databaseJobs.announce(ctx, { ...target, status: 'running' });
  }

  private async build(
    ctx: RequestContext,
    restore: RestoreEntity,
    source: DatabaseEntity,
    target: DatabaseEntity,
    password: string,
    credentials: CredentialsEntity,
  ): Promise<void> {
    let plan;
    try {
      plan = await this.backups.restorePlan(ctx, restore.backupId ?? '');
    } catch (err) {
      if (err instanceof DomainError) throw new PermanentJobError(`no plan: ${err.message}`);
      throw err;
    }
    try {
      await this.driver.buildRestore({
        serverId: target.platformServiceId,
        archive: { url: plan.base_backup_url, sha256: plan.base_backup_sha256 },
        archivedDatabaseName: source.name,
        databaseName: target.name,
        password,
        replicationPassword: this.secrets.open(credentials.replicationPasswordSealed),
      });
    } catch (err) {
      if (err instanceof CorruptArchiveError)
        throw new PermanentJobError(`${CORRUPT}${err.message}`);
      throw err;
    }
  }

  private async parties(
    manager: EntityManager,
    restoreId: string,
  ): Promise<RestoreParties | undefined> {
    const restore = await manager.findOneBy(RestoreEntity, { id: restoreId });
    if (!restore) return undefined;
    const source = await manager.findOneBy(DatabaseEntity, { id: restore.databaseId });
    const target = restore.targetDatabaseId
      ? await manager.findOneBy(DatabaseEntity, { id: restore.targetDatabaseId })
      : source;
    if (!source || !target) return undefined;
    return { restore, source, target };
  }

  private async failed(
    job: FailedJob<RestoreJobPayload>,
    reason: string,
    manager: EntityManager,
  ): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const parties = await this.parties(manager, job.payload.restore_id);
    if (!parties) return;
    const { restore, source, target } = parties;
    this.logger.error(`[${ctx.requestId}] restore ${restore.id} failed: ${reason}`);
    const inPlace = target.id === source.id;
    const error = reason.startsWith(CORRUPT)
      ? REASONS.corrupt
      : inPlace
        ? REASONS.failed
        : REASONS.failedTarget;
    const moved = await manager.update(
      RestoreEntity,
      { id: restore.id, status: restore.status === 'pending' ? 'pending' : 'running' },
      { status: 'failed', error, completedAt: new Date() },
    );
    if (moved.affected !== 1) return;
    const serverId = target.platformServiceId;
    await this.databaseJobs.withServerLock(serverId, async () => {
      if (inPlace) {
        await this.driver.abandonRestore(serverId);
        await this.driver.setReadOnly(serverId, false);
      } else {
        await this.driver.destroy(serverId);
      }
    });
    if (inPlace) {
      await manager.update(
        DatabaseEntity,
        { id: source.id, status: 'restoring' },
        { status: 'running', storageFull: false },
      );
      await this.databaseJobs.announce(ctx, { ...source, status: 'running' });
    } else {
      await manager.update(
        DatabaseEntity,
        { id: target.id, status: 'restoring' },
        { status: 'failed', error },
      );
      await this.databaseJobs.announce(ctx, { ...target, status: 'failed', error });
    }
  }
}
