import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { RestoreKind, RestoreStatus } from '@pgcloud/contracts';
import type { JobRunnerOptions } from '@pgcloud/jobs';
import { JobRunner, runNow } from '@pgcloud/jobs';
import { DataSource, In, IsNull, Not } from 'typeorm';
import type { EntityManager, FindOptionsWhere } from 'typeorm';
import { DatabaseEntity } from '../databases/database.entity.js';
import type { Transaction } from '../databases/databases.repository.js';
import type { RestoreEndFields, RestoreMove, RestoreProgressFields } from './restore-lifecycle.js';
import { RESTORE_MOVES, phasesUpTo, restoreMayMove } from './restore-lifecycle.js';
import { RestoreEntity } from './restore.entity.js';

/** A restore and the databases it acts on: its source, and the one whose data it replaces. */
export interface RestoreParties {
  restore: RestoreEntity;
  source?: DatabaseEntity;
  target?: DatabaseEntity;
}

/** A restore's record as it is written, before its job takes it up. */
export type NewRestore = Partial<RestoreEntity> & Pick<RestoreEntity, 'id'>;

/** What the build took, which the estimates of later dry runs are made of. */
export type RestoreStepFields = Pick<RestoreEntity, 'downloadSeconds' | 'replaySeconds'> &
  Partial<Pick<RestoreEntity, 'walFilesApplied'>>;

/**
 * provisioner.restores: a database's restores, their record and job, a cancel's note, and
 * the history estimates learn from. Every write of a restore's `status` or `phase` is
 * `moveRestore`'s or `advanceRestore`'s (below); methods that a caller runs inside its
 * transaction take that transaction.
 */
@Injectable()
export class RestoresRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction; pass its handle to the methods that take one. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * A runner of the jobs in the provisioner's jobs table (libs/jobs), on this repository's
   * DataSource, so that no other file injects one.
   */
  jobRunner(options: Omit<JobRunnerOptions, 'dataSource'>): JobRunner {
    return new JobRunner({ ...options, dataSource: this.dataSource });
  }

  /** Lets a queued job waiting for its time run now (libs/jobs' runNow). */
  runJobNow(options: { type: string; key: string; schema: string }): Promise<boolean> {
    return runNow(this.dataSource, options);
  }

  find(id: string): Promise<RestoreEntity | null> {
    return this.dataSource.manager.findOneBy(RestoreEntity, { id });
  }

  get(id: string): Promise<RestoreEntity> {
    return this.dataSource.manager.findOneByOrFail(RestoreEntity, { id });
  }

  /** The restore if it is one of the database's (and of `kind`, when given). */
  findOfDatabase(
    id: string,
    databaseId: string,
    kind?: RestoreKind,
  ): Promise<RestoreEntity | null> {
    return this.dataSource.manager.findOneBy(RestoreEntity, {
      id,
      databaseId,
      ...(kind ? { kind } : {}),
    });
  }

  /** As findOfDatabase, the row locked until the transaction ends. */
  lockOfDatabase(
    tx: Transaction,
    id: string,
    databaseId: string,
    kind?: RestoreKind,
  ): Promise<RestoreEntity | null> {
    return tx.findOne(RestoreEntity, {
      where: { id, databaseId, ...(kind ? { kind } : {}) },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** The database's restores, newest first; of one kind only when `kind` is given. */
  listOfDatabase(databaseId: string, kind?: RestoreKind): Promise<RestoreEntity[]> {
    return this.dataSource.manager.find(RestoreEntity, {
      where: { databaseId, ...(kind ? { kind } : {}) },
      order: { startedAt: 'DESC', id: 'DESC' },
    });
  }

  /** The newest `take` completed restores that recorded their step times. */
  estimateHistory(take: number): Promise<RestoreEntity[]> {
    return this.dataSource.manager.find(RestoreEntity, {
      where: { status: 'completed', downloadSeconds: Not(IsNull()) },
      order: { completedAt: 'DESC' },
      take,
    });
  }

  /** The restores that have not ended (pending or running). */
  unfinished(): Promise<RestoreEntity[]> {
    return this.dataSource.manager.find(RestoreEntity, {
      where: { status: In(['pending', 'running']) },
    });
  }

  /** True when a restore is under way on the database, as its source or as its target. */
  activeOn(tx: Transaction, databaseId: string): Promise<boolean> {
    return tx
      .createQueryBuilder(RestoreEntity, 'r')
      .where('r.status IN (:...active)', { active: ['pending', 'running'] })
      .andWhere('(r.database_id = :id OR r.target_database_id = :id)', { id: databaseId })
      .getExists();
  }

  async insert(tx: Transaction, restore: NewRestore): Promise<void> {
    await tx.insert(RestoreEntity, restore);
  }

  /** Notes on the record that a cancel was asked. */
  async noteCancel(tx: Transaction, id: string): Promise<void> {
    await tx.update(RestoreEntity, { id }, { cancelRequestedAt: new Date() });
  }

  /** True when a cancel of the restore was asked. */
  cancelAsked(id: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(RestoreEntity, {
      id,
      cancelRequestedAt: Not(IsNull()),
    });
  }

  /** The restore and its databases, as recorded now (in `tx`, when given). */
  async parties(restoreId: string, tx?: Transaction): Promise<RestoreParties | undefined> {
    const manager = tx ?? this.dataSource.manager;
    const restore = await manager.findOneBy(RestoreEntity, { id: restoreId });
    if (!restore) return undefined;
    const byId = async (id: string) =>
      (await manager.findOneBy(DatabaseEntity, { id })) ?? undefined;
    const source = await byId(restore.databaseId);
    const target = restore.targetDatabaseId ? await byId(restore.targetDatabaseId) : source;
    return { restore, source, target };
  }

  /** Records how long the build's steps took. */
  async recordStepSeconds(id: string, fields: RestoreStepFields): Promise<void> {
    await this.dataSource.manager.update(RestoreEntity, { id }, fields);
  }

  /** The restores whose source is the database. */
  async deleteOfDatabase(tx: Transaction, databaseId: string): Promise<void> {
    await tx.delete(RestoreEntity, { databaseId });
  }

  /** moveRestore outside any transaction. */
  move(restoreId: string, move: RestoreMove, fields?: RestoreEndFields): Promise<boolean> {
    return moveRestore(this.dataSource.manager, restoreId, move, fields);
  }

  /** advanceRestore outside any transaction. */
  advance(restoreId: string, fields: RestoreProgressFields): Promise<boolean> {
    return advanceRestore(this.dataSource.manager, restoreId, fields);
  }

  /** As advance, but only while no cancel was asked; false when one was (or nothing moved). */
  advanceUnlessCancelled(restoreId: string, fields: RestoreProgressFields): Promise<boolean> {
    return advanceRestore(this.dataSource.manager, restoreId, fields, {
      cancelRequestedAt: IsNull(),
    });
  }
}

// How a restore's status and phase are written, by the table of restore-lifecycle.ts and
// in the caller's transaction.

/**
 * Makes `move` on the restore if its status is one the move starts from (`from` narrows
 * them, as a caller that read the status does). False when the restore was elsewhere.
 */
export async function moveRestore(
  manager: EntityManager,
  restoreId: string,
  move: RestoreMove,
  fields: RestoreEndFields = {},
  from: readonly RestoreStatus[] = RESTORE_MOVES[move].from,
): Promise<boolean> {
  const refused = from.filter((status) => !restoreMayMove(status, move));
  if (refused.length > 0) throw new Error(`a restore cannot ${move} from ${refused.join(', ')}`);
  const moved = await manager.update(
    RestoreEntity,
    { id: restoreId, status: In([...from]) },
    { status: RESTORE_MOVES[move].to, ...fields },
  );
  return moved.affected === 1;
}

/**
 * Writes a running restore's progress. Its phase only goes forward: a write that would
 * take it back (a late write of an earlier phase) changes nothing. `also` adds conditions
 * (the swap's: no cancel asked). False when nothing was written.
 */
export async function advanceRestore(
  manager: EntityManager,
  restoreId: string,
  fields: RestoreProgressFields,
  also: FindOptionsWhere<RestoreEntity> = {},
): Promise<boolean> {
  const where: FindOptionsWhere<RestoreEntity> = { ...also, id: restoreId, status: 'running' };
  if (fields.phase !== undefined) where.phase = In(phasesUpTo(fields.phase));
  const moved = await manager.update(RestoreEntity, where, fields);
  return moved.affected === 1;
}
