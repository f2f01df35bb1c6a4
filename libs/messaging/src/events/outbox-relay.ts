import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { queryRows } from '@pgcloud/postgres';
import type { DataSource } from 'typeorm';
import type { EventPublisher } from '../event-publisher.js';
import { outboxTable, schemaOf } from './event-tables.js';
import type { Outbox } from './outbox.js';

/** How often and how much the relay works; the defaults suit a service. */
export interface OutboxRelayOptions {
  /** How often to look for events no wake-up announced (another replica's, a crashed run's). */
  pollIntervalMs?: number;
  /** Events claimed per transaction. */
  batchSize?: number;
  /** How long sent events stay in the table, for inspection, before they are pruned. */
  keepSentSeconds?: number;
  /** How often sent events are pruned. */
  pruneIntervalMs?: number;
}

interface OutboxRow {
  id: string;
  event: string;
  payload: unknown;
  request_id: string;
  created_at: Date;
}

/**
 * Publishes what the outbox holds, in the order it was written: claims unsent rows with
 * FOR UPDATE SKIP LOCKED (so replicas share the work and never publish a row at once),
 * publishes each persistent and confirmed under its row id, and marks it sent in the same
 * transaction. A crash between the confirm and the commit publishes that row again on the
 * next claim: delivery is at least once, and consumers deduplicate on the id.
 */
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private readonly table: string;
  private readonly pollIntervalMs: number;
  private readonly batchSize: number;
  private readonly keepSentSeconds: number;
  private readonly pruneIntervalMs: number;
  private pollTimer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private running = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly dataSource: DataSource,
    outbox: Outbox,
    private readonly publisher: EventPublisher,
    options: OutboxRelayOptions = {},
  ) {
    this.table = outboxTable(schemaOf(dataSource.options, 'OutboxRelay'));
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.batchSize = options.batchSize ?? 100;
    this.keepSentSeconds = options.keepSentSeconds ?? 24 * 3600;
    this.pruneIntervalMs = options.pruneIntervalMs ?? 10 * 60_000;
    this.unsubscribe = outbox.onCommitted(() => this.wake());
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Starts publishing: at once, on every wake-up, and on each poll. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.pollTimer = setInterval(() => this.wake(), this.pollIntervalMs);
    this.pruneTimer = setInterval(() => void this.prune(), this.pruneIntervalMs);
    this.wake();
  }

  /** Stops polling and waits for the batch in hand. */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe();
    clearInterval(this.pollTimer);
    clearInterval(this.pruneTimer);
    await this.draining;
  }

  /** Publishes what is unsent now rather than on the next poll. */
  wake(): void {
    if (!this.running) return;
    this.again = true;
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  private async drain(): Promise<void> {
    while (this.running && this.again) {
      this.again = false;
      try {
        // A full batch may have more behind it.
        if ((await this.relayBatch()) === this.batchSize) this.again = true;
      } catch (err) {
        // The broker or the database is away: the next poll tries again.
        this.logger.warn(`events not published yet: ${String(err)}`);
        return;
      }
    }
  }

  /** Publishes one batch; answers how many rows it claimed. */
  private async relayBatch(): Promise<number> {
    const { claimed, failure } = await this.dataSource.transaction(async (manager) => {
      const rows = await queryRows<OutboxRow>(
        manager,
        `SELECT id, event, payload, request_id, created_at FROM ${this.table}
          WHERE sent_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.batchSize],
      );
      const sent: string[] = [];
      let failure: Error | undefined;
      for (const row of rows) {
        try {
          await this.publisher.publishMessage(
            {
              event: row.event,
              payload: row.payload,
              request_id: row.request_id,
              at: row.created_at.toISOString(),
            },
            row.id,
          );
          sent.push(row.id);
        } catch (err) {
          // The rest keep their order and wait for the next attempt.
          failure = err instanceof Error ? err : new Error(String(err));
          break;
        }
      }
      if (sent.length > 0)
        await manager.query(`UPDATE ${this.table} SET sent_at = now() WHERE id = ANY($1)`, [sent]);
      // Committed either way: what the broker confirmed is not published again.
      return { claimed: rows.length, failure };
    });
    if (failure !== undefined) throw failure;
    return claimed;
  }

  /** Drops events sent longer ago than keepSentSeconds. */
  async prune(): Promise<void> {
    try {
      await this.dataSource.query(
        `DELETE FROM ${this.table}
          WHERE sent_at IS NOT NULL AND sent_at < now() - make_interval(secs => $1)`,
        [this.keepSentSeconds],
      );
    } catch (err) {
      this.logger.warn(`sent events not pruned: ${String(err)}`);
    }
  }
}
