import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { BackupSource, BackupStatusChanged, RequestContext } from '@pgcloud/contracts';
import { BACKUP_EVENTS, DATABASE_PATTERNS, DomainError } from '@pgcloud/contracts';
import type { FailedJob, Job, JobFailure } from '@pgcloud/jobs';
import type { JobRunner } from '@pgcloud/jobs';
import { PermanentJobError, enqueue, holdJob } from '@pgcloud/jobs';
import { Outbox, RpcClient } from '@pgcloud/messaging';
import { ObjectStore } from '@pgcloud/storage';
import { hostname } from 'node:os';
import { BackupServiceConfig } from '../config.js';
import type { BackupEntity } from './backup.entity.js';
import { backupBytes, backupSeconds } from './backup.metrics.js';
import { BackupRemoval } from './backup-removal.js';
import { BackupsRepository } from './backups.repository.js';
import type { Transaction } from './backups.repository.js';
import { BaseBackupUploader } from './base-backup.uploader.js';
import type { UploadedBackup } from './base-backup.uploader.js';

export const BACKUPS_SCHEMA = 'backups';
const TAKE_BACKUP = 'backup.take';
// A crash mid-backup costs one attempt; three crashes in a row and the backup fails.
const MAX_ATTEMPTS = 3;

/** What a backup job carries: the record's id, nothing secret. */
interface BackupJobPayload {
  backup_id: string;
  request_id: string;
}

/** Reasons the API shows; the detail (tool output, hosts) stays in the log. */
const REASONS = {
  notRunning: 'The database was not running when the backup started.',
  failed: 'The base backup could not be taken or stored; take a new one.',
} as const;

/** The kinds of PermanentJobError a backup fails with. */
const FAILURES = {
  databaseGone: 'database-gone',
  databaseNotRunning: 'database-not-running',
} as const;

/**
 * Takes base backups as jobs with leases (libs/jobs): pending -> running -> completed |
 * failed. A retried attempt first aborts what an earlier one left in S3.
 *
 * Every attempt uploads to the backup's one key, and the bucket always ends with one
 * object whose SHA-256 is the one recorded, however attempts overlap: the proof is in
 * docs/architecture.md#one-key-one-object.
 */
@Injectable()
export class BackupJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BackupJobs.name);
  private readonly runner: JobRunner;

  constructor(
    private readonly rpc: RpcClient,
    private readonly backups: BackupsRepository,
    private readonly uploader: BaseBackupUploader,
    private readonly store: ObjectStore,
    private readonly removal: BackupRemoval,
    private readonly outbox: Outbox,
    config: BackupServiceConfig,
  ) {
    this.runner = backups.jobRunner({
      schema: BACKUPS_SCHEMA,
      leaseSeconds: config.JOB_LEASE_SECONDS,
      concurrency: config.BACKUP_CONCURRENCY,
      workerId: `backup-service-${hostname()}-${process.pid}`,
      handlers: { [TAKE_BACKUP]: (job) => this.take(job as Job<BackupJobPayload>) },
      onFailed: (job, failure, tx) => this.failed(job as FailedJob<BackupJobPayload>, failure, tx),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.store.ensureBucket();
    this.runner.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
  }

  /** Queues the backup of a new record, in the transaction that writes it. */
  async enqueue(tx: Transaction, backupId: string, requestId: string): Promise<void> {
    await enqueue(tx, {
      schema: BACKUPS_SCHEMA,
      type: TAKE_BACKUP,
      key: backupId,
      maxAttempts: MAX_ATTEMPTS,
      payload: { backup_id: backupId, request_id: requestId },
    });
  }

  /** Starts on new work at once rather than on the next poll. */
  wake(): void {
    this.runner.wake();
  }

  /** One attempt at a backup job (the runner's handler; its spec calls it directly). */
  async take(job: Job<BackupJobPayload>): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const id = job.payload.backup_id;
    const record = await this.backups.transaction(async (tx) => {
      const started = await this.backups.move(tx, id, 'start', { startedAt: new Date() });
      const now = await this.backups.find(id, tx);
      if (now && started) await this.announce(tx, ctx, now);
      return now;
    });
    if (!record || record.status !== 'running') return; // deleted, or finished by an earlier attempt
    const timer = backupSeconds.startTimer();
    const outcome = await this.backUp(ctx, job, record).catch((err: unknown) => {
      timer({ outcome: 'failed' });
      throw err;
    });
    timer({ outcome });
  }

  /** Streams the backup to S3 and records it; answers how the attempt ended. */
  private async backUp(
    ctx: RequestContext,
    job: Job<BackupJobPayload>,
    record: BackupEntity,
  ): Promise<'completed' | 'discarded'> {
    const { id } = record;
    // An earlier attempt that died mid-upload left parts behind: they go first.
    await this.store.abortIncompleteUploads(record.objectKey);
    const source = await this.sourceOf(ctx, record);
    this.logger.log(`backup ${id} of ${record.databaseId}: streaming to S3`);
    const uploaded = await this.uploader.upload(
      {
        host: source.host,
        port: source.port,
        user: source.user,
        password: source.password,
        caPem: source.ca_pem,
      },
      record.objectKey,
      job.signal,
    );
    job.signal.throwIfAborted();
    const moved = await this.recordCompleted(ctx, job, record, uploaded);
    // Another attempt owns the job now, and maybe the key: nothing is recorded or removed.
    if (moved === undefined)
      throw new Error('the job is no longer held by this attempt; nothing recorded');
    if (!moved) {
      // Deleted while it ran (see BackupRemoval): the object we wrote has no record. A
      // record another attempt completed keeps its object.
      const now = await this.backups.find(id);
      if (!now || now.status === 'failed') await this.store.delete(record.objectKey);
      this.logger.log(`backup ${id} moved on to ${now?.status ?? 'deleted'} meanwhile`);
      return 'discarded';
    }
    backupBytes.observe(uploaded.sizeBytes);
    this.logger.log(
      `backup ${id} completed: ${uploaded.sizeBytes} bytes, ` +
        `WAL ${uploaded.startLsn}..${uploaded.endLsn}`,
    );
    return 'completed';
  }

  /**
   * The record's final write: `completed` with what was uploaded, fenced to this attempt.
   * Answers whether the record moved, or undefined when the attempt no longer holds the job.
   */
  private recordCompleted(
    ctx: RequestContext,
    job: Job<BackupJobPayload>,
    record: BackupEntity,
    uploaded: UploadedBackup,
  ): Promise<boolean | undefined> {
    return this.backups.transaction(async (tx) => {
      if (!(await holdJob(tx, job, BACKUPS_SCHEMA))) return undefined;
      const moved = await this.backups.move(tx, job.payload.backup_id, 'complete', {
        sizeBytes: uploaded.sizeBytes,
        checksumSha256: uploaded.checksumSha256,
        startLsn: uploaded.startLsn,
        endLsn: uploaded.endLsn,
        timeline: uploaded.timeline,
        completedAt: new Date(),
        error: null,
      });
      if (moved) await this.announce(tx, ctx, { ...record, status: 'completed', error: null });
      return moved;
    });
  }

  private async sourceOf(ctx: RequestContext, record: BackupEntity): Promise<BackupSource> {
    try {
      return await this.rpc.call(DATABASE_PATTERNS.backupSource, ctx, {
        database_id: record.databaseId,
      });
    } catch (err) {
      // Not answering (a restart, an outage) is not a refusal: the job retries.
      if (!(err instanceof DomainError) || err.code === 'SERVICE_UNAVAILABLE') throw err;
      if (err.code === 'DATABASE_NOT_FOUND') {
        // The database was deleted meanwhile; its backups go with it.
        await this.removal.remove(record.id);
        throw new PermanentJobError('the database was deleted', FAILURES.databaseGone);
      }
      throw new PermanentJobError(
        `the database is not running (${err.code})`,
        FAILURES.databaseNotRunning,
      );
    }
  }

  /** A backup job given up on (the runner's onFailed, in its transaction). */
  async failed(
    job: FailedJob<BackupJobPayload>,
    { kind, reason }: JobFailure,
    tx: Transaction,
  ): Promise<void> {
    const ctx: RequestContext = { requestId: job.payload.request_id };
    const record = await this.backups.find(job.payload.backup_id, tx);
    if (!record) return;
    this.logger.error(`backup ${record.id} failed: ${reason}`);
    const error = kind === FAILURES.databaseNotRunning ? REASONS.notRunning : REASONS.failed;
    const moved = await this.backups.move(tx, record.id, 'fail', { error, completedAt: null }, [
      record.status === 'pending' ? 'pending' : 'running',
    ]);
    if (!moved) return;
    await this.store.abortIncompleteUploads(record.objectKey);
    await this.store.delete(record.objectKey);
    await this.announce(tx, ctx, { ...record, status: 'failed', error });
  }

  /** Announces the backup's status, in the transaction that moved it there. */
  async announce(tx: Transaction, ctx: RequestContext, record: BackupEntity): Promise<void> {
    const payload: BackupStatusChanged = {
      backup_id: record.id,
      database_id: record.databaseId,
      project_id: record.projectId,
      status: record.status,
    };
    if (record.error) payload.error = record.error;
    await this.outbox.add(tx, BACKUP_EVENTS.statusChanged, ctx, payload);
  }
}
