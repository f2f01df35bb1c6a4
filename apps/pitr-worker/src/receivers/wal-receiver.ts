import { Logger } from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import type { ReceiverDeps } from './receiver-deps.js';
import { LeaseLost, ReceiverStream } from './receiver-stream.js';
import { ReceiverReport, receiverFailures } from './receiver.metrics.js';

const MAX_BACKOFF_MS = 30_000;
const NOT_READY_WAIT_MS = 2000;
// How often a backoff looks whether restart-receiver cut it short.
const BACKOFF_CHECK_MS = 1000;

/**
 * The WAL receiver of one database, while this replica holds its lease
 * (docs/architecture.md#the-wal-archive-inside): it supervises pg_receivewal (ReceiverStream runs
 * it; SegmentUploader puts its WAL in S3). A failed run is started again with backoff (`error`,
 * then `starting`), each failure counted; a database that is not running is waited for without a
 * failure.
 */
export class WalReceiver {
  private readonly logger = new Logger(WalReceiver.name);
  private readonly stopping = new AbortController();
  private readonly stream: ReceiverStream;
  private readonly report: ReceiverReport;
  private running: Promise<void> | undefined;
  private failures = 0;
  private ended = false;

  constructor(
    readonly databaseId: string,
    private readonly deps: ReceiverDeps,
  ) {
    this.report = new ReceiverReport(deps.clock);
    this.stream = new ReceiverStream(databaseId, deps, this.stopping.signal, this.report);
  }

  start(): void {
    if (this.running) return;
    this.report.open();
    this.running = this.supervise().finally(() => {
      this.report.close();
      this.ended = true;
    });
  }

  /** True once the receiver has stopped by itself (PITR turned off, lease lost). */
  get finished(): boolean {
    return this.ended;
  }

  /** Stops pg_receivewal and waits for the loop to end. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.stream.stopProcess();
    await this.running;
  }

  private async supervise(): Promise<void> {
    const { databaseId, deps } = this;
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      try {
        const end = await this.stream.runOnce();
        if (end === 'stop') break;
        this.failures = 0;
      } catch (err) {
        if (signal.aborted || err instanceof LeaseLost) break;
        if (err instanceof DomainError && err.code === 'DATABASE_NOT_READY') {
          // Not running (restoring, being deleted): nothing fails, there is nothing to stream.
          this.report.state = 'stopped';
          await deps.progress.showStatus(databaseId, deps.workerId, 'stopped');
          await deps.clock.sleep(NOT_READY_WAIT_MS, signal);
          continue;
        }
        this.failures++;
        receiverFailures.inc();
        this.report.state = 'error';
        this.logger.warn(`receiver of ${databaseId} failed: ${describe(err)}`);
        await deps.progress.recordFailure(databaseId, deps.workerId).catch(() => undefined);
        await this.backOff(backoffDelay(this.failures));
      }
    }
    this.stream.stopProcess();
    await this.stream.processExited();
    await deps.spool.remove(databaseId).catch(() => undefined);
  }

  /**
   * Waits before the next attempt. restart-receiver (a new generation) cuts the wait short
   * and starts the count of failures afresh, so a receiver it restarts starts at once.
   */
  private async backOff(ms: number): Promise<void> {
    const { clock } = this.deps;
    const until = clock.now() + ms;
    while (!this.stopping.signal.aborted && clock.now() < until) {
      await clock.sleep(Math.min(BACKOFF_CHECK_MS, until - clock.now()), this.stopping.signal);
      const generation = this.stream.generation;
      if (generation !== undefined && (await this.restarted(generation))) {
        this.failures = 0;
        return;
      }
    }
  }

  private async restarted(generation: number): Promise<boolean> {
    const current = await this.deps.progress.generation(this.databaseId).catch(() => undefined);
    return current !== undefined && current !== generation;
  }
}

/** The wait after the n-th failure in a row: 1 s, doubled each time, at most 30 s. */
export function backoffDelay(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1));
}

function describe(err: unknown): string {
  if (err instanceof DomainError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
