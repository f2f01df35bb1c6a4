import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { ProvisionerConfig } from '../config.js';
import { DatabaseJobs } from '../databases/database.jobs.js';
import { DatabaseEntity } from '../databases/database.entity.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { storageAction } from './storage-limit.js';

/**
 * Makes the servers match the records, at start and every RECONCILE_INTERVAL_SECONDS,
 * by connecting rather than trusting pg_ctl: a running database whose server is down is
 * started again; a server without a record is removed; unfinished work is queued again.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(Reconciler.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    @InjectRepository(DatabaseEntity) private readonly databases: Repository<DatabaseEntity>,
    private readonly driver: DatabaseDriver,
    private readonly jobs: DatabaseJobs,
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
    const records = await this.databases.find();
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
      });
    }
    for (const serverId of await this.driver.list()) {
      if (known.has(serverId)) continue;
      await this.step(`server ${serverId}`, async () => {
        // A database created since the records were read has its server by now: look again.
        if (await this.databases.existsBy({ platformServiceId: serverId })) return;
        this.logger.warn(`server ${serverId} has no record; removing it`);
        await this.jobs.withServerLock(serverId, () => this.driver.destroy(serverId));
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
    const record = await this.databases.findOneBy({ id: stale.id });
    if (!record || (record.status !== 'running' && record.status !== 'restoring')) return;
    const state = await this.driver.state(record.platformServiceId);
    if (state === 'running') {
      if (record.status === 'running') await this.watchStorage(record);
      return;
    }
    this.logger.warn(
      `database ${record.id}: server ${record.platformServiceId} is ${state}; starting it`,
    );
    if (state === 'missing') {
      // A database restored into is made by its restore job, which owns it until it ends.
      if (record.status === 'restoring') return;
      await this.databases.update(
        { id: record.id, status: In(['running', 'restoring']) },
        { status: 'failed', error: 'its server and data are gone' },
      );
      return;
    }
    await this.driver.ensureRunning(record.platformServiceId);
  }

  /** The storage limit (storage-limit.ts): read-only at the limit, writable below 90%. */
  private async watchStorage(record: DatabaseEntity): Promise<void> {
    const used = await this.driver.usedBytes(record.platformServiceId);
    const action = storageAction(used, record.config.storage, record.storageFull);
    if (action === 'none') return;
    const readOnly = action === 'make-read-only';
    await this.driver.setReadOnly(record.platformServiceId, readOnly);
    await this.databases.update({ id: record.id }, { storageFull: readOnly });
    const usedMib = Math.round(used / 1024 ** 2);
    if (readOnly) {
      this.logger.warn(
        `database ${record.id} uses ${usedMib} MiB of ${record.config.storage} GiB: read-only`,
      );
    } else {
      this.logger.log(`database ${record.id} is down to ${usedMib} MiB: writable again`);
    }
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
