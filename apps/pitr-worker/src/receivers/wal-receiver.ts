import { Logger } from '@nestjs/common';
import type { BackupSource, RequestContext, WalReceiverState } from '@pgcloud/contracts';
import { DATABASE_PATTERNS, DomainError } from '@pgcloud/contracts';
import type { OsUser } from '@pgcloud/postgres';
import { parseSegmentName, queryRows, segmentOf, segmentStart } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import { randomBytes } from 'node:crypto';
import { open, readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type { RpcClient } from '@pgcloud/messaging';
import { ArchiveEntity, RECEIVER_ACTIVE } from '../archive/archive.entity.js';
import type { ArchiveStarter } from '../archive/archive-starter.js';
import { coveredUntil } from '../archive/recovery-window.js';
import { partialKey, segmentKey } from '../archive/wal-keys.js';
import { PrimarySession } from './primary-session.js';
import type { PrimarySample } from './primary-session.js';
import type { ReceivewalProcess } from './receivewal-process.js';
import { startReceivewal } from './receivewal-process.js';
import type { Spool } from './spool.js';

const PARTIAL = '.partial';
const MAX_BACKOFF_MS = 30_000;
const NOT_READY_WAIT_MS = 2000;
// A receiver stops writing when its lease has less than this left.
const LEASE_MARGIN_SECONDS = 2;

/** What every receiver of a replica shares. */
export interface ReceiverDeps {
  dataSource: DataSource;
  store: ObjectStore;
  rpc: RpcClient;
  starter: ArchiveStarter;
  spool: Spool;
  osUser: OsUser;
  pgBinDir: string;
  workerId: string;
  flushIntervalMs: number;
}

/** Why a receiver's run ended without an error. */
type RunEnd = 'stop' | 'restart';

/** The archive's progress while one pg_receivewal runs. */
interface Progress {
  timeline: number;
  /** Everything below is in S3. */
  archived: bigint;
  /** Where the slot was last moved to. */
  slotAt: bigint;
  /** Samples the archive has not covered yet, and the newest one it has. */
  samples: { at: Date; lsn: bigint }[];
  lastWalFile: string | null;
}

class Lost extends Error {}

/**
 * The WAL receiver of one database, while this replica holds its lease (shared DESIGN.md
 * section 5): a supervised pg_receivewal streams into the spool; every flush interval
 * completed segments are uploaded and recorded, the segment being written is uploaded
 * under its `.partial` key as far as it is synced, the slot follows what is in S3, and
 * the recovery window's `to` moves to the newest primary clock sample the archive
 * covers. A failed pg_receivewal is started again with backoff (`error`, then
 * `starting`), each failure counted.
 */
export class WalReceiver {
  private readonly logger = new Logger(WalReceiver.name);
  private readonly stopping = new AbortController();
  private process: ReceivewalProcess | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  /** The receiver_generation of the current run: restart-receiver moves it on. */
  private generation: number | undefined;
  private ended = false;

  constructor(
    readonly databaseId: string,
    private readonly deps: ReceiverDeps,
  ) {}

  start(): void {
    this.running ??= this.supervise().finally(() => (this.ended = true));
  }

  /** True once the receiver has stopped by itself (PITR turned off, lease lost). */
  get finished(): boolean {
    return this.ended;
  }

  /** Stops pg_receivewal and waits for the loop to end. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.process?.stop();
    await this.running;
  }

  private async supervise(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        const end = await this.runOnce();
        if (end === 'stop') break;
        this.failures = 0;
      } catch (err) {
        if (this.stopping.signal.aborted || err instanceof Lost) break;
        if (err instanceof DomainError && err.code === 'DATABASE_NOT_READY') {
          // Not running (restoring, being deleted): nothing fails, there is nothing to stream.
          await this.setStatus('stopped');
          await sleep(NOT_READY_WAIT_MS, undefined, { signal: this.stopping.signal }).catch(
            () => undefined,
          );
          continue;
        }
        this.failures++;
        this.logger.warn(`receiver of ${this.databaseId} failed: ${describe(err)}`);
        await this.recordFailure();
        await this.backOff(Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (this.failures - 1)));
      }
    }
    this.process?.stop();
    await this.process?.exited;
    await this.deps.spool.remove(this.databaseId).catch(() => undefined);
  }

  /** One pg_receivewal, from start to exit; answers why it ended when that was asked. */
  private async runOnce(): Promise<RunEnd> {
    let archive = await this.held();
    const generation = archive.receiverGeneration;
    this.generation = generation;
    await this.setStatus('starting', generation);
    const ctx: RequestContext = {
      requestId: `receiver-${this.databaseId}-${Date.now()}`,
      userId: archive.ownerId,
    };
    const source = await this.deps.rpc.call(DATABASE_PATTERNS.backupSource, ctx, {
      database_id: this.databaseId,
    });
    const session = await PrimarySession.open(source);
    try {
      if (archive.startLsn !== null && !(await this.continues(archive, session)))
        archive = await this.startAnew(ctx, archive);
      if (archive.startLsn === null) archive = await this.deps.starter.start(ctx, this.databaseId);
      if (archive.startLsn === null || archive.timeline === null) throw new Lost();
      const archived = archive.archivedLsn ?? archive.startLsn;
      const progress: Progress = {
        timeline: archive.timeline,
        archived,
        slotAt: segmentStart(segmentOf(archived)),
        samples: [],
        lastWalFile: archive.lastWalFile,
      };
      return await this.stream(archive, source, session, progress, generation);
    } finally {
      await session.close();
    }
  }

  private async stream(
    archive: ArchiveEntity,
    source: BackupSource,
    session: PrimarySession,
    progress: Progress,
    generation: number,
  ): Promise<RunEnd> {
    const { directory, caFile } = await this.deps.spool.prepare(
      this.databaseId,
      { timeline: progress.timeline, segno: segmentOf(progress.archived) },
      source.ca_pem,
    );
    const applicationName = `pgcloud_pitr_${randomBytes(4).toString('hex')}`;
    const child = startReceivewal({
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
      while (!this.stopping.signal.aborted) {
        const sample = await session.sample(applicationName);
        const end = await this.cycle(archive, session, directory, sample, progress, generation);
        if (end) return end;
        if (exit) break;
        await sleep(this.deps.flushIntervalMs, undefined, { signal: this.stopping.signal }).catch(
          () => undefined,
        );
      }
      if (this.stopping.signal.aborted) return 'stop';
      // Whatever it completed before it died still goes to S3.
      await this.upload(archive, directory, null, progress, generation);
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
   * One flush interval: upload, advance the window, record it all, and only then move
   * the slot (it must never pass what the record says is in S3). A receiver whose lease is
   * about to run out, or whose archive changed (restart, re-enable), writes nothing.
   */
  private async cycle(
    archive: ArchiveEntity,
    session: PrimarySession,
    directory: string,
    sample: PrimarySample,
    progress: Progress,
    generation: number,
  ): Promise<RunEnd | undefined> {
    const fence = await this.fence(generation);
    if (fence) return fence;
    progress.samples.push({ at: sample.at, lsn: sample.lsn });
    const before = progress.archived;
    await this.upload(archive, directory, sample.flushed, progress, generation);
    const to = coveredUntil(progress.samples, progress.archived);
    if (to) progress.samples = progress.samples.filter((s) => s.at >= to);
    const status: WalReceiverState = sample.streaming ? 'running' : 'starting';
    const rows = await queryRows<{ database_id: string }>(
      this.deps.dataSource,
      `UPDATE pitr.archives
          SET receiver_status = $4, archived_lsn = $5, last_wal_file = $6,
              window_to = GREATEST(window_to, $7::timestamptz),
              latest_wal_time = CASE WHEN $8 THEN now() ELSE latest_wal_time END,
              bytes_received = bytes_received + $9
        WHERE database_id = $1 AND lease_owner = $2 AND receiver_generation = $3
          AND lease_expires_at > now() AND ${RECEIVER_ACTIVE}
       RETURNING database_id`,
      [
        this.databaseId,
        this.deps.workerId,
        generation,
        status,
        progress.archived.toString(),
        progress.lastWalFile,
        to ?? null,
        progress.archived > before,
        Number(progress.archived - before),
      ],
    );
    // Restarted, disabled, paused or taken over meanwhile: the next run sorts it out.
    if (rows.length === 0) return 'restart';
    const slotTarget = segmentStart(segmentOf(progress.archived));
    if (slotTarget > progress.slotAt) {
      await session.advanceSlot(slotTarget);
      progress.slotAt = slotTarget;
    }
    return undefined;
  }

  /**
   * Whether this receiver may still write: its lease has a few seconds left and its
   * archive is the one it started on. Checked before every upload, so a replica that lost
   * the lease never overwrites what the new holder stored.
   */
  private async fence(generation: number): Promise<RunEnd | undefined> {
    const [row] = await queryRows<{ safe: boolean; generation: number }>(
      this.deps.dataSource,
      `SELECT lease_expires_at > now() + make_interval(secs => $3) AS safe,
              receiver_generation AS generation
         FROM pitr.archives
        WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}`,
      [this.databaseId, this.deps.workerId, LEASE_MARGIN_SECONDS],
    );
    if (!row || !row.safe) return 'stop';
    return row.generation === generation ? undefined : 'restart';
  }

  /**
   * Completed segments go up whole and are recorded; then the segment being written goes
   * up under its `.partial` key as far as pg_receivewal has synced it (`flushed`). The
   * fence is looked at again before that: a `.partial` is the one key a late writer could
   * shorten (completed segments are the same bytes whoever uploads them).
   */
  private async upload(
    archive: ArchiveEntity,
    directory: string,
    flushed: bigint | null,
    progress: Progress,
    generation: number,
  ): Promise<void> {
    const files = (await readdir(directory)).sort();
    for (const name of files) {
      const segment = parseSegmentName(name);
      if (!segment || segment.timeline !== progress.timeline) continue;
      const end = segmentStart(segment.segno + 1n);
      if (end > progress.archived) {
        const key = segmentKey(archive.projectId, this.databaseId, segment.timeline, name);
        const body = await readFile(join(directory, name));
        await this.deps.store.put(key, body);
        await this.deps.dataSource.query(
          `INSERT INTO pitr.segments (database_id, name, timeline, segno, object_key, size_bytes)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
          [this.databaseId, name, segment.timeline, segment.segno.toString(), key, body.length],
        );
        progress.archived = end;
        progress.lastWalFile = name;
      }
      await unlink(join(directory, name));
    }
    const partial = files.find((f) => f.endsWith(PARTIAL));
    if (!partial || flushed === null) return;
    const name = partial.slice(0, -PARTIAL.length);
    const segment = parseSegmentName(name);
    if (!segment || segment.timeline !== progress.timeline) return;
    const start = segmentStart(segment.segno);
    if (segmentOf(flushed) !== segment.segno || flushed <= progress.archived || flushed <= start)
      return;
    const body = await readPrefix(join(directory, partial), Number(flushed - start));
    if (!body) return; // completed meanwhile: the next round uploads it whole
    if (await this.fence(generation)) return;
    await this.deps.store.put(
      partialKey(archive.projectId, this.databaseId, segment.timeline, name),
      body,
    );
    progress.archived = flushed;
    progress.lastWalFile = partial;
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
    await this.deps.dataSource.query(
      `UPDATE pitr.archives
          SET start_lsn = NULL, timeline = NULL, archived_lsn = NULL, base_backup_id = NULL,
              window_to = NULL, latest_wal_time = NULL, keep_from = NULL, last_wal_file = NULL,
              enabled_at = now()
        WHERE database_id = $1 AND lease_owner = $2 AND enabled`,
      [this.databaseId, this.deps.workerId],
    );
    return this.deps.starter.start(ctx, archive.databaseId);
  }

  /**
   * Waits before the next attempt. restart-receiver (a new generation) cuts the wait short
   * and starts the count of failures afresh, so a receiver it restarts starts at once.
   */
  private async backOff(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopping.signal.aborted && Date.now() < until) {
      await sleep(Math.min(1000, until - Date.now()), undefined, {
        signal: this.stopping.signal,
      }).catch(() => undefined);
      if (this.generation !== undefined && (await this.restarted(this.generation))) {
        this.failures = 0;
        return;
      }
    }
  }

  private async restarted(generation: number): Promise<boolean> {
    const [row] = await queryRows<{ generation: number }>(
      this.deps.dataSource,
      `SELECT receiver_generation AS generation FROM pitr.archives WHERE database_id = $1`,
      [this.databaseId],
    ).catch(() => []);
    return row !== undefined && row.generation !== generation;
  }

  private async held(): Promise<ArchiveEntity> {
    const [active] = await queryRows<{ database_id: string }>(
      this.deps.dataSource,
      `SELECT database_id FROM pitr.archives
        WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}`,
      [this.databaseId, this.deps.workerId],
    );
    const archive =
      active &&
      (await this.deps.dataSource
        .getRepository(ArchiveEntity)
        .findOneBy({ databaseId: this.databaseId }));
    if (!archive) throw new Lost();
    return archive;
  }

  /** Shows a state, unless the receiver was restarted (a new generation) or is not ours. */
  private async setStatus(status: WalReceiverState, generation?: number): Promise<void> {
    await this.deps.dataSource.query(
      `UPDATE pitr.archives SET receiver_status = $3
        WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}
          AND ($4::integer IS NULL OR receiver_generation = $4)`,
      [this.databaseId, this.deps.workerId, status, generation ?? null],
    );
  }

  private async recordFailure(): Promise<void> {
    await this.deps.dataSource
      .query(
        `UPDATE pitr.archives SET receiver_status = 'error', receiver_errors = receiver_errors + 1
          WHERE database_id = $1 AND lease_owner = $2 AND ${RECEIVER_ACTIVE}`,
        [this.databaseId, this.deps.workerId],
      )
      .catch(() => undefined);
  }
}

/** The first `length` bytes of a file (what pg_receivewal has synced of a `.partial`). */
async function readPrefix(path: string, length: number): Promise<Buffer | undefined> {
  const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!handle) return undefined;
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function describe(err: unknown): string {
  if (err instanceof DomainError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
