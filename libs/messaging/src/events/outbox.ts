import { randomUUID } from 'node:crypto';
import type { EventDef, RequestContext } from '@pgcloud/contracts';
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import { outboxTable, schemaOf } from './event-tables.js';

/**
 * A service's transactional outbox: an event is written in the transaction of the change
 * it tells of, so it exists exactly when the change does; OutboxRelay publishes it. Once a
 * transaction that wrote events commits, the relay of this process is woken at once.
 */
export class Outbox {
  private readonly table: string;
  /** Transactions that wrote an event and have not ended yet. */
  private readonly writers = new WeakSet<QueryRunner>();
  private readonly listeners = new Set<() => void>();

  constructor(dataSource: DataSource) {
    if (!dataSource.isInitialized) throw new Error('Outbox needs an initialized DataSource');
    this.table = outboxTable(schemaOf(dataSource.options, 'Outbox'));
    const watcher: EntitySubscriberInterface = {
      afterTransactionCommit: ({ queryRunner }) => {
        // A savepoint released is not the commit: only the outermost one makes rows visible.
        if (queryRunner.isTransactionActive || !this.writers.has(queryRunner)) return;
        this.writers.delete(queryRunner);
        for (const listener of this.listeners) listener();
      },
      afterTransactionRollback: ({ queryRunner }) => {
        if (!queryRunner.isTransactionActive) this.writers.delete(queryRunner);
      },
    };
    dataSource.subscribers.push(watcher);
  }

  /**
   * Writes an event in the caller's transaction (`manager` must be a transaction's); it is
   * published after the commit and never when the transaction rolls back. Answers its id,
   * which travels as the message id consumers deduplicate on.
   */
  async add<T extends object>(
    manager: EntityManager,
    def: EventDef<T>,
    ctx: RequestContext,
    payload: T,
  ): Promise<string> {
    const queryRunner = manager.queryRunner;
    if (!queryRunner?.isTransactionActive)
      throw new Error(`${def.name} must be added to the outbox inside a transaction`);
    const id = randomUUID();
    await manager.query(
      `INSERT INTO ${this.table} (id, event, payload, request_id) VALUES ($1, $2, $3::jsonb, $4)`,
      [id, def.name, JSON.stringify(payload), ctx.requestId],
    );
    this.writers.add(queryRunner);
    return id;
  }

  /** Calls `listener` each time a transaction that added events has committed. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
