import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { OsUser } from '@pgcloud/postgres';
import { queryRows, resolveOsUser } from '@pgcloud/postgres';
import { ObjectStore } from '@pgcloud/storage';
import { hostname } from 'node:os';
import { DataSource } from 'typeorm';
import { ArchiveStarter } from '../archive/archive-starter.js';
import { DatabasesClient } from '../clients/databases.client.js';
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
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private osUser: OsUser | undefined;
  private spool: Spool | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly store: ObjectStore,
    private readonly databases: DatabasesClient,
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
    await this.dataSource
      .query(`UPDATE pitr.archives SET lease_owner = NULL WHERE lease_owner = $1`, [this.workerId])
      .catch(() => undefined);
    await this.spool?.removeAll();
  }

  private async tick(): Promise<void> {
    try {
      await this.releaseDisabled();
      const held = await this.renew();
      for (const [id, receiver] of this.receivers)
        if (!held.has(id)) {
          this.receivers.delete(id);
          await receiver.stop();
        }
      for (const id of await this.claim(held.size)) held.add(id);
      for (const id of held)
        if (!this.receivers.get(id) || this.receivers.get(id)?.finished) this.launch(id);
    } catch (err) {
      this.logger.warn(`lease round failed: ${String(err)}`);
    }
  }

  /** Stops the receivers of databases whose PITR went off, then gives their leases back. */
  private async releaseDisabled(): Promise<void> {
    const rows = await queryRows<{ database_id: string }>(
      this.dataSource,
      `SELECT database_id FROM pitr.archives
        WHERE lease_owner = $1 AND (NOT enabled OR paused_for_restore)`,
      [this.workerId],
    );
    for (const { database_id: id } of rows) {
      const receiver = this.receivers.get(id);
      this.receivers.delete(id);
      await receiver?.stop();
      await this.dataSource.query(
        `UPDATE pitr.archives SET lease_owner = NULL, lease_expires_at = NULL
          WHERE database_id = $1 AND lease_owner = $2 AND (NOT enabled OR paused_for_restore)`,
        [id, this.workerId],
      );
      this.logger.log(`receiver of ${id} stopped: PITR is off, or the database is restoring`);
    }
  }

  private async renew(): Promise<Set<string>> {
    const rows = await queryRows<{ database_id: string }>(
      this.dataSource,
      `UPDATE pitr.archives
          SET lease_expires_at = now() + make_interval(secs => $2)
        WHERE lease_owner = $1 AND enabled AND NOT paused_for_restore
       RETURNING database_id`,
      [this.workerId, this.config.PITR_LEASE_SECONDS],
    );
    return new Set(rows.map((r) => r.database_id));
  }

  /** Takes receivers nobody runs, up to PITR_MAX_RECEIVERS; a new holder starts a new receiver. */
  private async claim(holding: number): Promise<string[]> {
    const room = this.config.PITR_MAX_RECEIVERS - holding;
    if (room <= 0) return [];
    const rows = await queryRows<{ database_id: string; previous: string | null }>(
      this.dataSource,
      `WITH free AS (
         SELECT database_id, lease_owner FROM pitr.archives
          WHERE enabled AND NOT paused_for_restore
            AND (lease_owner IS NULL OR lease_expires_at < now())
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
      databases: this.databases,
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
