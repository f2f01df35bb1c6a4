import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { OsUser } from '@pgcloud/postgres';
import { queryRows, resolveOsUser } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import { hostname } from 'node:os';
import { DataSource } from 'typeorm';
import { RpcClient } from '@pgcloud/messaging';
import { RECEIVER_ACTIVE } from '../archive/archive.entity.js';
import { ArchiveStarter } from '../archive/archive-starter.js';
import { PitrWorkerConfig } from '../config.js';
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly store: ObjectStore,
    private readonly starter: ArchiveStarter,
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
    await this.dataSource
      .query(`UPDATE pitr.archives SET lease_owner = NULL WHERE lease_owner = $1`, [this.workerId])
      .catch(() => undefined);
    await this.spool?.removeAll();
  }

  private async tick(): Promise<void> {
    try {
      await this.renew();
      const rows = await queryRows<{ database_id: string; active: boolean }>(
        this.dataSource,
        `SELECT database_id, ${RECEIVER_ACTIVE} AS active FROM pitr.archives
          WHERE lease_owner = $1`,
        [this.workerId],
      );
      const held = new Set(rows.filter((r) => r.active).map((r) => r.database_id));
      for (const row of rows) if (!row.active) this.retire(row.database_id, true);
      for (const id of this.receivers.keys()) if (!held.has(id)) this.retire(id, false);
      for (const id of await this.claim(held.size)) held.add(id);
      for (const id of held)
        if (!this.stopping.has(id) && (this.receivers.get(id)?.finished ?? true)) this.launch(id);
    } catch (err) {
      this.logger.warn(`lease round failed: ${String(err)}`);
    }
  }

  /**
   * Renews the leases of this replica; a row another transaction has locked (an archive
   * being started) is renewed on the next tick rather than waited for.
   */
  private async renew(): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives SET lease_expires_at = now() + make_interval(secs => $2)
        WHERE database_id IN (SELECT database_id FROM pitr.archives
                               WHERE lease_owner = $1 AND ${RECEIVER_ACTIVE}
                               FOR UPDATE SKIP LOCKED)`,
      [this.workerId, this.config.PITR_LEASE_SECONDS],
    );
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
        await this.dataSource.query(
          `UPDATE pitr.archives SET lease_owner = NULL, lease_expires_at = NULL
            WHERE database_id = $1 AND lease_owner = $2 AND NOT (${RECEIVER_ACTIVE})`,
          [databaseId, this.workerId],
        );
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
    const rows = await queryRows<{ database_id: string; previous: string | null }>(
      this.dataSource,
      `WITH free AS (
         SELECT database_id, lease_owner FROM pitr.archives
          WHERE ${RECEIVER_ACTIVE} AND (lease_owner IS NULL OR lease_expires_at < now())
          ORDER BY database_id LIMIT $3 FOR UPDATE SKIP LOCKED)
       UPDATE pitr.archives a
          SET lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
              receiver_status = 'starting', receiver_started_at = now(), receiver_errors = 0,
              bytes_received = 0
         FROM free WHERE a.database_id = free.database_id
       RETURNING a.database_id, free.lease_owner AS previous`,
      [this.workerId, this.config.PITR_LEASE_SECONDS, room],
    );
    for (const row of rows)
      this.logger.log(
        `receiver of ${row.database_id} claimed` +
          (row.previous ? ` from ${row.previous}, whose lease ran out` : ''),
      );
    return rows.map((r) => r.database_id);
  }

  private launch(databaseId: string): void {
    if (!this.osUser || !this.spool) return;
    const receiver = new WalReceiver(databaseId, {
      dataSource: this.dataSource,
      store: this.store,
      rpc: this.rpc,
      starter: this.starter,
      spool: this.spool,
      osUser: this.osUser,
      pgBinDir: this.config.pgBinDir,
      workerId: this.workerId,
      flushIntervalMs: this.config.PITR_FLUSH_INTERVAL_SECONDS * 1000,
    });
    this.receivers.set(databaseId, receiver);
    receiver.start();
  }
}
