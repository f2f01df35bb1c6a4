import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ProvenRestorable } from '@pgcloud/contracts';
import type { JobRunnerOptions } from '@pgcloud/jobs';
import { JobRunner } from '@pgcloud/jobs';
import { DataSource, In, MoreThan } from 'typeorm';
import { DatabaseEntity } from '../databases/database.entity.js';
import type { Transaction } from '../databases/databases.repository.js';
import { DrillEntity } from './drill.entity.js';
import { DRILL_MOVES } from './drill-lifecycle.js';

/** What a drill's record is written with once it ends. */
export type DrillEnd = Pick<DrillEntity, 'checks' | 'error'> &
  Partial<Pick<DrillEntity, 'restoreSeconds' | 'targetLsn'>>;

/**
 * provisioner.drills: a database's restore drills, their record and job, and on the
 * database its last passed one. Methods a caller runs inside its transaction take it.
 */
@Injectable()
export class DrillsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** A runner of the jobs in the provisioner's jobs table, on this repository's DataSource. */
  jobRunner(options: Omit<JobRunnerOptions, 'dataSource'>): JobRunner {
    return new JobRunner({ ...options, dataSource: this.dataSource });
  }

  async insert(tx: Transaction, drill: Partial<DrillEntity> & Pick<DrillEntity, 'id'>) {
    await tx.insert(DrillEntity, drill);
  }

  find(id: string): Promise<DrillEntity | null> {
    return this.dataSource.manager.findOneBy(DrillEntity, { id });
  }

  /** The drill if it is one of the database's. */
  findOfDatabase(id: string, databaseId: string): Promise<DrillEntity | null> {
    return this.dataSource.manager.findOneBy(DrillEntity, { id, databaseId });
  }

  /** The database's drills, newest first. */
  listOfDatabase(databaseId: string): Promise<DrillEntity[]> {
    return this.dataSource.manager.find(DrillEntity, {
      where: { databaseId },
      order: { startedAt: 'DESC', id: 'DESC' },
    });
  }

  /** Manual drills of the database started since `since` (its daily quota). */
  manualSince(tx: Transaction, databaseId: string, since: Date): Promise<number> {
    return tx.countBy(DrillEntity, { databaseId, kind: 'manual', startedAt: MoreThan(since) });
  }

  /** Which of these databases have an automated drill for one of these slots. */
  async inSlots(databaseIds: string[], slots: Date[]): Promise<Set<string>> {
    if (databaseIds.length === 0) return new Set();
    const rows = await this.dataSource.query<{ key: string }[]>(
      `SELECT database_id || '@' || (extract(epoch FROM scheduled_for) * 1000)::bigint AS key
         FROM provisioner.drills
        WHERE kind = 'automated' AND database_id = ANY($1) AND scheduled_for = ANY($2)`,
      [databaseIds, slots],
    );
    return new Set(rows.map((row) => row.key));
  }

  /** Moves a drill on to running (again, after a crash); false when it has ended. */
  async start(id: string): Promise<boolean> {
    const move = 'start';
    const moved = await this.dataSource.manager.update(
      DrillEntity,
      { id, status: In([...DRILL_MOVES[move].from]) },
      { status: DRILL_MOVES[move].to },
    );
    return (moved.affected ?? 0) > 0;
  }

  /** Where a running drill's work is, and what it has chosen. */
  async advance(
    id: string,
    { phase, ...chosen }: Partial<Pick<DrillEntity, 'phase' | 'backupId' | 'targetTime'>>,
  ) {
    await this.dataSource.manager.update(
      DrillEntity,
      { id, status: 'running' },
      { ...chosen, ...(phase ? { phase } : {}) },
    );
  }

  /** Ends an unfinished drill, passed or failed; false when it had ended already. */
  async end(
    tx: Transaction,
    id: string,
    move: 'pass' | 'fail',
    fields: DrillEnd,
  ): Promise<boolean> {
    // A failed drill keeps the phase it failed in.
    const done = move === 'pass' ? { phase: 'done' as const } : {};
    const moved = await tx.update(
      DrillEntity,
      { id, status: In([...DRILL_MOVES[move].from]) },
      { status: DRILL_MOVES[move].to, ...fields, ...done, completedAt: new Date() },
    );
    return (moved.affected ?? 0) > 0;
  }

  /** Whether jobs of `type` wait for a worker in `table`: queued, due, not taken yet. */
  async jobsWaiting(table: string, type: string): Promise<boolean> {
    const rows = await this.dataSource.query<{ waiting: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM ${table}
                       WHERE type = $1 AND status = 'queued' AND run_at <= now()) AS waiting`,
      [type],
    );
    return rows[0]?.waiting === true;
  }

  /** The database's last passed drill, as GET shows it on the database. */
  async recordProven(tx: Transaction, databaseId: string, proven: ProvenRestorable) {
    await tx.update(DatabaseEntity, { id: databaseId }, { lastProvenRestorable: proven });
  }
}
