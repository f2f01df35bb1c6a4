import { Injectable, Logger } from '@nestjs/common';
import { RpcClient } from '@pgcloud/messaging';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { OsUser } from '@pgcloud/postgres';
import { resolveOsUser } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import { hostname } from 'node:os';
import { ArchiveRepository } from '../archive/archive.repository.js';
import { ArchiveStarter } from '../archive/archive-starter.js';
import { ReceiverLeases } from '../archive/receiver-leases.repository.js';
import { ReceiverProgress } from '../archive/receiver-progress.repository.js';
import { SegmentRepository } from '../archive/segment.repository.js';
import { Clock } from '../clock.js';
import { PitrWorkerConfig } from '../config.js';
import { PrimarySessions } from './primary-session.js';
import { startReceivewal } from './receivewal-process.js';
import { Spool } from './spool.js';
import { WalReceiver } from './wal-receiver.js';

const TICK_MS = 1000;

/**
 * Shares the WAL receivers out among pitr-worker replicas by lease: every second a
 * replica renews the leases it holds, gives back those of databases whose PITR was turned
 * off or that are being restored in place, and claims receivers nobody holds or whose holder stopped renewing (a dead
 * replica's, after PITR_LEASE_SECONDS). The slot keeps the WAL meanwhile: no gap.
 */
@Injectable()
export class ReceiverSupervisor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReceiverSupervisor.name);
  private readonly workerId = `pitr-worker-${hostname()}-${process.pid}`;
  private readonly receivers = new Map<string, WalReceiver>();
  private readonly stopping = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private osUser: OsUser | undefined;
  private spool: Spool | undefined;

  constructor(
    private readonly rpc: RpcClient,
    private readonly leases: ReceiverLeases,
    private readonly progress: ReceiverProgress,
    private readonly archives: ArchiveRepository,
    private readonly segments: SegmentRepository,
    private readonly store: ObjectStore,
    private readonly starter: ArchiveStarter,
    private readonly sessions: PrimarySessions,
    private readonly clock: Clock,
    private readonly config: PitrWorkerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.store.ensureBucket();
    this.osUser = await resolveOsUser(this.config.PG_OS_USER);
    this.spool = new Spool(this.config.spoolDir, this.osUser);
    await this.spool.removeDeadProcesses();
    this.timer = setInterval(() => {
      this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
    }, TICK_MS);
  }

  /** Stops every receiver and gives the leases back, so another replica takes over at once. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
    await Promise.all([...this.receivers.values()].map((r) => r.stop()));
    this.receivers.clear();
    await Promise.all(this.stopping.values());
    await this.leases.releaseAll(this.workerId).catch(() => undefined);
    await this.spool?.removeAll();
  }

  private async tick(): Promise<void> {
    try {
      // A row another transaction has locked (an archive being started) is renewed on the
      // next tick rather than waited for.
      await this.leases.renew(this.workerId, this.config.PITR_LEASE_SECONDS);
      const leases = await this.leases.heldBy(this.workerId);
      const held = new Set(leases.filter((l) => l.active).map((l) => l.databaseId));
      for (const lease of leases) if (!lease.active) this.retire(lease.databaseId, true);
      for (const id of this.receivers.keys()) if (!held.has(id)) this.retire(id, false);
      for (const id of await this.claim(held.size)) held.add(id);
      for (const id of held)
        if (!this.stopping.has(id) && (this.receivers.get(id)?.finished ?? true)) this.launch(id);
    } catch (err) {
      this.logger.warn(`lease round failed: ${String(err)}`);
    }
  }

  /**
   * Stops a receiver in the background, so a slow one never holds up the leases of the
   * others; with `release`, gives the lease back once it has stopped (PITR turned off, or
   * the database restoring in place).
   */
  private retire(databaseId: string, release: boolean): void {
    if (this.stopping.has(databaseId)) return;
    const receiver = this.receivers.get(databaseId);
    this.receivers.delete(databaseId);
    const stopped = (receiver?.stop() ?? Promise.resolve())
      .then(async () => {
        if (!release) return;
        await this.leases.releaseStopped(databaseId, this.workerId);
        this.logger.log(
          `receiver of ${databaseId} stopped: PITR is off, or the database is restoring`,
        );
      })
      .catch((err: unknown) =>
        this.logger.warn(`stopping the receiver of ${databaseId}: ${String(err)}`),
      )
      .finally(() => this.stopping.delete(databaseId));
    this.stopping.set(databaseId, stopped);
  }

  /** Takes receivers nobody runs, up to PITR_MAX_RECEIVERS; a new holder starts a new receiver. */
  private async claim(holding: number): Promise<string[]> {
    const room = this.config.PITR_MAX_RECEIVERS - holding;
    if (room <= 0) return [];
    const claimed = await this.leases.claim(this.workerId, this.config.PITR_LEASE_SECONDS, room);
    for (const lease of claimed)
      this.logger.log(
        `receiver of ${lease.databaseId} claimed` +
          (lease.previous ? ` from ${lease.previous}, whose lease ran out` : ''),
      );
    return claimed.map((l) => l.databaseId);
  }

  private launch(databaseId: string): void {
    if (!this.osUser || !this.spool) return;
    const receiver = new WalReceiver(databaseId, {
      archives: this.archives,
      leases: this.leases,
      progress: this.progress,
      segments: this.segments,
      store: this.store,
      rpc: this.rpc,
      starter: this.starter,
      sessions: this.sessions,
      spool: this.spool,
      clock: this.clock,
      startReceivewal,
      osUser: this.osUser,
      pgBinDir: this.config.pgBinDir,
      workerId: this.workerId,
      flushIntervalMs: this.config.PITR_FLUSH_INTERVAL_SECONDS * 1000,
    });
    this.receivers.set(databaseId, receiver);
    receiver.start();
  }
}
