import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ProvisionerConfig } from '../config.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { DatabasesRepository } from '../databases/databases.repository.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { ResizeJobs } from '../resize/resize.jobs.js';
import { StorageWatch } from '../storage/storage-watch.js';

/**
 * Makes the servers match the records, at start and every RECONCILE_INTERVAL_SECONDS,
 * by connecting rather than trusting pg_ctl: a running database whose server is down is
 * started again (and its size watched: storage/storage-watch.ts); unfinished work is queued
 * again. A server without a record is never
 * deleted at once (the records may be the wrong ones: a mistaken DATABASE_URL, a metadata
 * database restored from an older backup): it is stopped and quarantined, and deleted
 * only after QUARANTINE_GRACE_SECONDS; more than QUARANTINE_MAX_SERVERS at once and the
 * pass refuses, touching none.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(Reconciler.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly databases: DatabasesRepository,
    private readonly driver: DatabaseDriver,
    private readonly jobs: DatabaseJobs,
    private readonly storage: StorageWatch,
    private readonly resizes: ResizeJobs,
    private readonly config: ProvisionerConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass; errors are logged and the next pass tries again. */
  async reconcile(): Promise<void> {
    const records = await this.databases.all();
    const known = new Set(records.map((record) => record.platformServiceId));
    for (const record of records) {
      // One server that will not start must not keep the others from being looked after.
      await this.step(`database ${record.id}`, async () => {
        if (record.status === 'running') {
          await this.jobs.withServerLock(record.platformServiceId, () => this.keepRunning(record));
        }
        // A restore holds its server's lock for minutes: look after the others meanwhile.
        if (record.status === 'restoring') {
          await this.jobs.tryWithServerLock(record.platformServiceId, () =>
            this.keepRunning(record),
          );
        }
        if (record.status === 'provisioning' || record.status === 'deleting')
          await this.jobs.requeue(record);
        if (record.status === 'resizing') await this.resizes.requeue(record);
      });
    }
    await this.step('disk watermark', () => this.storage.checkDisk());
    await this.quarantineStrays(known);
    await this.step('quarantine', async () => {
      const graceMs = this.config.QUARANTINE_GRACE_SECONDS * 1000;
      for (const serverId of await this.driver.purgeQuarantined(new Date(Date.now() - graceMs)))
        this.logger.warn(`quarantined server ${serverId} deleted: its grace period is over`);
    });
  }

  private async quarantineStrays(known: Set<string>): Promise<void> {
    const strays: string[] = [];
    for (const serverId of await this.driver.list()) {
      // A database created since the records were read has its server by now: look again.
      if (!known.has(serverId) && !(await this.databases.existsForServer(serverId)))
        strays.push(serverId);
    }
    if (strays.length > this.config.QUARANTINE_MAX_SERVERS) {
      this.logger.error(
        `${strays.length} servers have no record (${strays.join(', ')}): more than ` +
          `QUARANTINE_MAX_SERVERS=${this.config.QUARANTINE_MAX_SERVERS}, so this is taken for ` +
          `the wrong metadata database (check DATABASE_URL) and none is touched`,
      );
      return;
    }
    for (const serverId of strays) {
      await this.step(`server ${serverId}`, async () => {
        const where = await this.jobs.withServerLock(serverId, () =>
          this.driver.quarantine(serverId),
        );
        this.logger.warn(
          `server ${serverId} has no record: stopped and quarantined in ${where}; deleted ` +
            `after QUARANTINE_GRACE_SECONDS=${this.config.QUARANTINE_GRACE_SECONDS}`,
        );
      });
    }
  }

  private async step(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.logger.error(
        `reconcile of ${what} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  private async keepRunning(stale: DatabaseEntity): Promise<void> {
    const record = await this.databases.find(stale.id);
    if (!record || (record.status !== 'running' && record.status !== 'restoring')) return;
    const state = await this.driver.state(record.platformServiceId);
    if (state === 'running') {
      if (record.status === 'running') await this.storage.check(record);
      return;
    }
    this.logger.warn(
      `database ${record.id}: server ${record.platformServiceId} is ${state}; starting it`,
    );
    if (state === 'missing') {
      // A database restored into is made by its restore job, which owns it until it ends.
      if (record.status === 'restoring') return;
      await this.databases.move(record.id, 'lost', { error: 'its server and data are gone' });
      return;
    }
    const endpoint = await this.driver.ensureRunning(record.platformServiceId);
    // The driver may answer it at another address than before (it decides where).
    if (endpoint.host !== record.host) await this.databases.setHost(record.id, endpoint.host);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.reconcile()
        .catch((err: unknown) => this.logger.error(`reconcile failed: ${String(err)}`))
        .finally(() => this.schedule(this.config.RECONCILE_INTERVAL_SECONDS * 1000));
    }, delayMs);
  }
}
