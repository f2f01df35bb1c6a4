import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { JobExecution } from './job-execution.js';
import type { ExecutionSettings } from './job-execution.js';
import { defaultBackoff, errorReason } from './job-policy.js';
import type { ClaimedJob } from './job-statements.js';
import { jobStatements } from './job-statements.js';
import type { JobHandler, OnJobFailed } from './job.types.js';
import type { JobBacklog } from './job.metrics.js';
import { reportBacklog } from './job.metrics.js';
import { queryRows } from '@pgcloud/postgres';

/** How a JobRunner works one service's jobs table. */
export interface JobRunnerOptions {
  dataSource: DataSource;
  /** The owning service's schema, holding the table from jobsTableSql. */
  schema: string;
  /** Names this process in locked_by; unique per process (host and pid, or a pod name). */
  workerId: string;
  /** One handler per job type; this runner only claims jobs of these types. */
  handlers: Record<string, JobHandler>;
  onFailed?: OnJobFailed;
  /**
   * How long a claim or renewal holds a job (default 30). Renewed every third of it; when
   * renewals fail for two thirds of it, the handler's signal is aborted, so the handler
   * stops before the lease can lapse and another worker take the job.
   */
  leaseSeconds?: number;
  pollIntervalMs?: number;
  /** How many handlers may run at once in this process. */
  concurrency?: number;
  /** Milliseconds to wait before the next attempt, given the attempt that just failed. */
  backoff?: (attempt: number) => number;
  /** How long stop() waits for running handlers before giving their jobs up. */
  stopTimeoutMs?: number;
}

/** Claims and runs jobs from one service's jobs table, renewing a lease on each. */
export class JobRunner {
  private readonly logger = new Logger(JobRunner.name);
  private readonly settings: ExecutionSettings;
  private readonly handlers: Record<string, JobHandler>;
  private readonly handledTypes: string[];
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly stopTimeoutMs: number;
  private readonly active = new Map<JobExecution, Promise<void>>();
  private pollTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private wakeRequested = false;
  private started = false;
  private stopReporting: (() => void) | undefined;
  private stopping = false;

  constructor(options: JobRunnerOptions) {
    const { leaseSeconds = 30, concurrency = 2, pollIntervalMs = 500 } = options;
    if (!(leaseSeconds > 0)) throw new RangeError('leaseSeconds must be positive');
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError('concurrency must be a positive integer');
    if (!(pollIntervalMs > 0)) throw new RangeError('pollIntervalMs must be positive');
    this.handlers = options.handlers;
    this.handledTypes = Object.keys(options.handlers);
    this.concurrency = concurrency;
    this.pollIntervalMs = pollIntervalMs;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.settings = {
      dataSource: options.dataSource,
      statements: jobStatements(options.schema),
      workerId: options.workerId,
      leaseSeconds,
      backoff: options.backoff ?? defaultBackoff,
      onFailed: options.onFailed,
      logger: this.logger,
    };
  }

  /** Starts polling; a no-op when already running. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopReporting = reportBacklog(() => this.backlog());
    this.stopping = false;
    this.wake();
  }

  /** Looks for work now rather than on the next poll; call it right after an enqueue commits. */
  wake(): void {
    if (!this.started || this.stopping) return;
    if (this.ticking) {
      // A claim pass is under way; run another as soon as it ends, since it may have
      // looked before the new job was committed.
      this.wakeRequested = true;
      return;
    }
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.ticking = this.claimWhileFree().finally(() => {
      this.ticking = undefined;
      this.scheduleNextPass();
    });
  }

  /**
   * Stops claiming and waits up to stopTimeoutMs for running handlers. Handlers still running
   * then are aborted and their leases left to lapse, so another worker takes their jobs over.
   */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.wakeRequested = false;
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    await this.ticking;
    const finished = await this.allFinishedWithin(this.stopTimeoutMs);
    if (!finished) {
      this.logger.warn(`stopping with ${this.active.size} job(s) unfinished; their leases lapse`);
      for (const execution of this.active.keys()) execution.giveUp('the worker is stopping');
    }
    this.stopReporting?.();
    this.started = false;
  }

  /** The jobs of this runner's types that are due and wait for a worker (job.metrics.ts). */
  private async backlog(): Promise<JobBacklog[]> {
    if (this.handledTypes.length === 0) return [];
    const rows = await queryRows<{ type: string; count: number; oldest_seconds: number }>(
      this.settings.dataSource,
      this.settings.statements.waiting,
      [this.handledTypes],
    );
    return rows.map((row) => ({
      type: row.type,
      count: row.count,
      oldestSeconds: Math.max(0, row.oldest_seconds),
    }));
  }

  /** Claims jobs until every slot is busy or none is due. Never rejects. */
  private async claimWhileFree(): Promise<void> {
    try {
      while (!this.stopping && this.active.size < this.concurrency) {
        const claimed = await this.claim();
        if (!claimed) return;
        // Launched even if stop() began during the claim: the job is ours now, and leaving
        // it would strand it until its lease lapsed.
        this.launch(claimed);
      }
    } catch (error) {
      this.logger.error(`claiming a job failed: ${errorReason(error)}`);
    }
  }

  /** The job claimed, if any, and when the claim was sent: its lease starts after that. */
  private async claim(): Promise<{ job: ClaimedJob; sentAt: number } | undefined> {
    if (this.handledTypes.length === 0) return undefined;
    const { dataSource, statements, workerId, leaseSeconds } = this.settings;
    const values = [workerId, leaseSeconds, this.handledTypes];
    const sentAt = performance.now();
    const [job] = await queryRows<ClaimedJob>(dataSource, statements.claim, values);
    return job && { job, sentAt };
  }

  private launch({ job, sentAt }: { job: ClaimedJob; sentAt: number }): void {
    const execution = new JobExecution(this.settings, job, this.handlers[job.type], sentAt);
    // run() never rejects; the chain frees the slot and looks for the next job at once.
    const running = execution.run().finally(() => {
      this.active.delete(execution);
      this.wake();
    });
    this.active.set(execution, running);
  }

  private scheduleNextPass(): void {
    if (!this.started || this.stopping) return;
    if (this.wakeRequested) {
      this.wakeRequested = false;
      this.wake();
      return;
    }
    this.pollTimer = setTimeout(() => this.wake(), this.pollIntervalMs);
  }

  private async allFinishedWithin(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(resolve, timeoutMs, false);
    });
    const allDone = Promise.all(this.active.values()).then(() => true as const);
    try {
      return await Promise.race([allDone, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
