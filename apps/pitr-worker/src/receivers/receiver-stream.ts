import { Logger } from '@nestjs/common';
import { DATABASE_PATTERNS } from '@pgcloud/contracts';
import type { BackupSource, RequestContext, WalReceiverState } from '@pgcloud/contracts';
import { segmentOf, segmentStart } from '@pgcloud/postgres';
import { randomBytes } from 'node:crypto';
import type { ArchiveEntity } from '../archive/archive.entity.js';
import { coveredUntil } from '../archive/recovery-window.js';
import { LeaseFence } from './lease-fence.js';
import type { RunEnd } from './lease-fence.js';
import type { PrimarySample, PrimarySession } from './primary-session.js';
import type { ReceiverDeps } from './receiver-deps.js';
import type { ReceivewalProcess } from './receivewal-process.js';
import type { ReceiverReport } from './receiver.metrics.js';
import { walArchivedBytes } from './receiver.metrics.js';
import type { ArchivedPosition } from './segment-uploader.js';
import { SegmentUploader } from './segment-uploader.js';

// How long an interval waits for pg_receivewal to flush what its sample saw inserted.
const FLUSH_WAIT_MS = 250;

/** The receiver no longer holds its lease, or its archive is gone: it stops for good. */
export class LeaseLost extends Error {}

/** The archive's progress while one pg_receivewal runs. */
interface StreamProgress extends ArchivedPosition {
  /** Where the slot was last moved to. */
  slotAt: bigint;
  /** Samples the archive has not covered yet, and the newest one it has. */
  samples: { at: Date; lsn: bigint }[];
}

/**
 * The runs of one database's pg_receivewal, one at a time: each checks the lease, begins
 * the archive anew when the server no longer carries it on, streams into the spool, and
 * every flush interval uploads, advances the window, records it all, and only then moves
 * the slot (it must never pass what the record says is in S3).
 */
export class ReceiverStream {
  private readonly logger = new Logger(ReceiverStream.name);
  private process: ReceivewalProcess | undefined;
  /** The receiver_generation of the current run: restart-receiver moves it on. */
  generation: number | undefined;

  constructor(
    private readonly databaseId: string,
    private readonly deps: ReceiverDeps,
    private readonly signal: AbortSignal,
    /** What the metrics show of this receiver: kept up to date as it goes. */
    private readonly report: ReceiverReport,
  ) {}

  /** Stops the pg_receivewal running, if any. */
  stopProcess(): void {
    this.process?.stop();
  }

  /** Answers once the last pg_receivewal started has exited. */
  async processExited(): Promise<void> {
    await this.process?.exited;
  }

  /** One pg_receivewal, from start to exit; answers why it ended when that was asked. */
  async runOnce(): Promise<RunEnd> {
    let archive = await this.held();
    const generation = archive.receiverGeneration;
    this.generation = generation;
    this.report.state = 'starting';
    await this.deps.progress.showStatus(
      this.databaseId,
      this.deps.workerId,
      'starting',
      generation,
    );
    const ctx: RequestContext = {
      requestId: `receiver-${this.databaseId}-${Date.now()}`,
      userId: archive.ownerId,
    };
    const source = await this.deps.rpc.call(DATABASE_PATTERNS.backupSource, ctx, {
      database_id: this.databaseId,
    });
    const session = await this.deps.sessions.open(source);
    try {
      if (archive.startLsn !== null && !(await this.continues(archive, session)))
        archive = await this.startAnew(ctx, archive);
      if (archive.startLsn === null) archive = await this.deps.starter.start(ctx, this.databaseId);
      if (archive.startLsn === null || archive.timeline === null) throw new LeaseLost();
      const archived = archive.archivedLsn ?? archive.startLsn;
      const progress: StreamProgress = {
        timeline: archive.timeline,
        archived,
        slotAt: segmentStart(segmentOf(archived)),
        samples: [],
        lastWalFile: archive.lastWalFile,
      };
      const fence = new LeaseFence(
        this.databaseId,
        this.deps.workerId,
        this.deps.leases,
        generation,
      );
      return await this.stream(archive, source, session, progress, fence);
    } finally {
      await session.close();
    }
  }

  private async stream(
    archive: ArchiveEntity,
    source: BackupSource,
    session: PrimarySession,
    progress: StreamProgress,
    fence: LeaseFence,
  ): Promise<RunEnd> {
    const { directory, caFile } = await this.deps.spool.prepare(
      this.databaseId,
      { timeline: progress.timeline, segno: segmentOf(progress.archived) },
      source.ca_pem,
    );
    const uploader = new SegmentUploader(
      { projectId: archive.projectId, databaseId: this.databaseId, directory },
      fence,
      this.deps,
    );
    const applicationName = `pgcloud_pitr_${randomBytes(4).toString('hex')}`;
    const child = this.deps.startReceivewal({
      pgBinDir: this.deps.pgBinDir,
      osUser: this.deps.osUser,
      directory,
      source,
      caFile,
      applicationName,
    });
    this.process = child;
    let exit: Awaited<typeof child.exited> | undefined;
    void child.exited.then((e) => (exit = e));
    try {
      while (!this.signal.aborted) {
        const sample = await session.sample(applicationName);
        // The WAL up to the sample's position is on its way (milliseconds): uploaded once
        // it is flushed, the window reaches the sample's time in this interval, not the next.
        const flushed =
          sample.flushed === null
            ? null
            : await session.flushedReaching(applicationName, sample.lsn, FLUSH_WAIT_MS);
        const end = await this.cycle(session, uploader, fence, { ...sample, flushed }, progress);
        if (end) return end;
        if (exit) break;
        await this.deps.clock.sleep(this.deps.flushIntervalMs, this.signal);
      }
      if (this.signal.aborted) return 'stop';
      // Whatever it completed before it died still goes to S3.
      await uploader.upload(progress, null);
      const ended = exit ?? (await child.exited);
      throw new Error(
        `pg_receivewal exited (${ended.signal ?? `code ${ended.code}`}): ${ended.stderr}`,
      );
    } finally {
      child.stop();
      await child.exited;
    }
  }

  /**
   * One flush interval: upload, advance the window, record it all, then move the slot. A
   * receiver whose lease is about to run out, or whose archive changed (restart,
   * re-enable), writes nothing.
   */
  private async cycle(
    session: PrimarySession,
    uploader: SegmentUploader,
    fence: LeaseFence,
    sample: PrimarySample,
    progress: StreamProgress,
  ): Promise<RunEnd | undefined> {
    const fenced = await fence.check();
    if (fenced) return fenced;
    progress.samples.push({ at: sample.at, lsn: sample.lsn });
    const before = progress.archived;
    await uploader.upload(progress, sample.flushed);
    const to = coveredUntil(progress.samples, progress.archived);
    if (to) progress.samples = progress.samples.filter((s) => s.at >= to);
    const status: WalReceiverState = sample.streaming ? 'running' : 'starting';
    const bytesReceived = Number(progress.archived - before);
    const recorded = await this.deps.progress.recordFlush(
      this.databaseId,
      this.deps.workerId,
      fence.generation,
      {
        status,
        archivedLsn: progress.archived,
        lastWalFile: progress.lastWalFile,
        windowTo: to ?? null,
        bytesReceived,
      },
    );
    // Restarted, disabled, paused or taken over meanwhile: the next run sorts it out.
    if (!recorded) return 'restart';
    this.report.state = status;
    this.report.flushed(sample, to, progress.archived);
    walArchivedBytes.inc(bytesReceived);
    const slotTarget = segmentStart(segmentOf(progress.archived));
    if (slotTarget > progress.slotAt) {
      await session.advanceSlot(slotTarget);
      progress.slotAt = slotTarget;
    }
    return undefined;
  }

  /**
   * Whether the server still carries the archive on: its slot is there and it is on the
   * archive's timeline. An in-place restore brings other data (no slot, a new timeline).
   */
  private async continues(archive: ArchiveEntity, session: PrimarySession): Promise<boolean> {
    const server = await session.state();
    if (server.slotExists && server.timeline === archive.timeline) return true;
    this.logger.log(
      `archive of ${this.databaseId} starts anew: ` +
        (server.slotExists
          ? `timeline ${server.timeline}`
          : 'the replication slot is gone or lost its WAL'),
    );
    return false;
  }

  /** Forgets the archive's position and window; the starter then begins a new one. */
  private async startAnew(ctx: RequestContext, archive: ArchiveEntity): Promise<ArchiveEntity> {
    await this.deps.progress.forgetPosition(this.databaseId, this.deps.workerId);
    this.report.forget();
    return this.deps.starter.start(ctx, archive.databaseId);
  }

  /** The archive, while this replica holds the lease of a receiver that should run. */
  private async held(): Promise<ArchiveEntity> {
    const active = await this.deps.leases.holds(this.databaseId, this.deps.workerId);
    const archive = active && (await this.deps.archives.find(this.databaseId));
    if (!archive) throw new LeaseLost();
    return archive;
  }
}
