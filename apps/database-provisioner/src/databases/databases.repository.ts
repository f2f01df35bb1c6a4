import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DATABASE_STATUSES } from '@pgcloud/contracts';
import type { EnqueueOptions, JobRunnerOptions } from '@pgcloud/jobs';
import { JobRunner, enqueue } from '@pgcloud/jobs';
import { queryRows } from '@pgcloud/postgres';
import { DataSource, In, IsNull, LessThanOrEqual, Not } from 'typeorm';
import type { EntityManager } from 'typeorm';
import type { DatabaseMove, DatabaseMoveFields } from './database-lifecycle.js';
import { DATABASE_MOVES } from './database-lifecycle.js';
import { CredentialsEntity, DatabaseEntity } from './database.entity.js';

/** A transaction's handle, for the methods and functions here that run inside one. */
export type Transaction = EntityManager;

/** The statuses of a database the API shows: every one but `deleting`. */
const LIVE = DATABASE_STATUSES;

/** What the storage watch and a cleanup window write of a database: never its status. */
export type StorageFields = Partial<
  Pick<
    DatabaseEntity,
    | 'storageFull'
    | 'storageUsedBytes'
    | 'storageFencedAt'
    | 'storageCleanupAt'
    | 'storageCleanupUntil'
    | 'storageCleanupFromBytes'
  >
>;

/**
 * provisioner.databases, their credentials, and the projects project-service announced
 * deleted. What the provisioner knows of projects is only those tombstones: a create checks
 * the project over RPC first, and the project may be deleted between that check and the
 * insert, so the insert and the handler of project.deleted take the same per-project lock:
 * either the insert sees the project's tombstone and refuses, or the handler sees the new
 * database and removes it.
 */
@Injectable()
export class DatabasesRepository {
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

  /** Queues a job outside any transaction (libs/jobs' enqueue: deduplicated by its key). */
  enqueueJob(options: EnqueueOptions): Promise<boolean> {
    return enqueue(this.dataSource.manager, options);
  }

  /** Makes creates in one project, and the removal of a deleted project's databases, take turns. */
  async lockProject(tx: Transaction, projectId: string): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [projectId]);
  }

  /** Records that the project is gone; call with its lock held. */
  async recordProjectDeleted(tx: Transaction, projectId: string): Promise<void> {
    await tx.query(
      `INSERT INTO provisioner.deleted_projects (project_id) VALUES ($1)
       ON CONFLICT (project_id) DO NOTHING`,
      [projectId],
    );
  }

  /** True when project-service announced the project deleted; call with its lock held. */
  async projectDeleted(tx: Transaction, projectId: string): Promise<boolean> {
    const rows = await queryRows(
      tx,
      'SELECT 1 FROM provisioner.deleted_projects WHERE project_id = $1',
      [projectId],
    );
    return rows.length > 0;
  }

  /** The project's databases, but those being deleted. */
  countInProject(tx: Transaction, projectId: string): Promise<number> {
    return tx.countBy(DatabaseEntity, { projectId, status: Not('deleting') });
  }

  /** The ids of the project's databases, but those being deleted. */
  async idsInProject(tx: Transaction, projectId: string): Promise<string[]> {
    const rows = await tx.find(DatabaseEntity, {
      select: { id: true },
      where: { projectId, status: Not('deleting') },
    });
    return rows.map((row) => row.id);
  }

  nameTaken(tx: Transaction, projectId: string, name: string): Promise<boolean> {
    return tx.existsBy(DatabaseEntity, { projectId, name, status: Not('deleting') });
  }

  /** Every port a record holds; records being deleted hold theirs until their servers go. */
  async usedPorts(tx: Transaction): Promise<Set<number>> {
    const rows = await tx.find(DatabaseEntity, { select: { port: true } });
    return new Set(rows.map((row) => row.port));
  }

  /** Inserts the database and its sealed credentials. */
  async insert(
    tx: Transaction,
    record: DatabaseEntity,
    credentials: CredentialsEntity,
  ): Promise<void> {
    await tx.insert(DatabaseEntity, record);
    await tx.insert(CredentialsEntity, credentials);
  }

  /** A new record's fields, as TypeORM makes an entity of them. */
  create(fields: Partial<DatabaseEntity>): DatabaseEntity {
    return this.dataSource.manager.create(DatabaseEntity, fields);
  }

  get(id: string): Promise<DatabaseEntity> {
    return this.dataSource.manager.findOneByOrFail(DatabaseEntity, { id });
  }

  find(id: string, tx?: Transaction): Promise<DatabaseEntity | null> {
    return (tx ?? this.dataSource.manager).findOneBy(DatabaseEntity, { id });
  }

  /** The record, locked until the transaction ends. */
  lockForUpdate(tx: Transaction, id: string): Promise<DatabaseEntity | null> {
    return tx.findOne(DatabaseEntity, {
      where: { id },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** Every record, whatever its status. */
  all(): Promise<DatabaseEntity[]> {
    return this.dataSource.manager.find(DatabaseEntity);
  }

  /** True when a record (of any status) names the server. */
  existsForServer(platformServiceId: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(DatabaseEntity, { platformServiceId });
  }

  /** The project's databases the API shows, oldest first. */
  listInProject(projectId: string): Promise<DatabaseEntity[]> {
    return this.dataSource.manager.find(DatabaseEntity, {
      where: { projectId, status: Not('deleting') },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Records the point a branch was copied at. */
  async setParentPoint(databaseId: string, lsn: string, at: string | null): Promise<void> {
    await this.dataSource.manager.update(
      DatabaseEntity,
      { id: databaseId },
      { parentLsn: lsn, parentAt: at === null ? null : new Date(at) },
    );
  }

  /** The databases branched from one, whatever their project, unless being deleted. */
  branchesOf(databaseId: string): Promise<DatabaseEntity[]> {
    return this.dataSource.manager.find(DatabaseEntity, {
      where: { parentDatabaseId: databaseId, status: Not('deleting') },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** The project's database of that name, unless it is being deleted. */
  findByName(projectId: string, name: string): Promise<DatabaseEntity | null> {
    return this.dataSource.manager.findOneBy(DatabaseEntity, {
      projectId,
      name,
      status: In([...LIVE]),
    });
  }

  /** Up to `limit` databases not leaving yet whose expires_at is at or before `now`. */
  async expiredIds(now: Date, limit: number): Promise<string[]> {
    const rows = await this.dataSource.manager.find(DatabaseEntity, {
      select: { id: true },
      where: { expiresAt: LessThanOrEqual(now), status: Not('deleting') },
      order: { expiresAt: 'ASC' },
      take: limit,
    });
    return rows.map((row) => row.id);
  }

  /** Sets or clears a database's expiry; false when it is leaving already. */
  async setExpiry(databaseId: string, expiresAt: Date | null, tx?: Transaction): Promise<boolean> {
    const rows = await queryRows<{ id: string }>(
      tx ?? this.dataSource.manager,
      `UPDATE provisioner.databases SET expires_at = $2, updated_at = now()
        WHERE id = $1 AND status <> 'deleting' RETURNING id`,
      [databaseId, expiresAt],
    );
    return rows.length > 0;
  }

  /** Every running database, oldest first. */
  running(): Promise<DatabaseEntity[]> {
    return this.dataSource.manager.find(DatabaseEntity, {
      where: { status: 'running' },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** The running databases not fenced. */
  runningUnfenced(): Promise<DatabaseEntity[]> {
    return this.dataSource.manager.findBy(DatabaseEntity, {
      status: 'running',
      storageFencedAt: IsNull(),
    });
  }

  /** Stores a new login password (sealed), in the caller's transaction. */
  async replacePassword(tx: Transaction, databaseId: string, passwordSealed: string) {
    await tx.update(CredentialsEntity, { databaseId }, { passwordSealed });
  }

  credentialsOf(databaseId: string): Promise<CredentialsEntity> {
    return this.dataSource.manager.findOneByOrFail(CredentialsEntity, { databaseId });
  }

  async deleteCredentials(databaseId: string): Promise<void> {
    await this.dataSource.manager.delete(CredentialsEntity, { databaseId });
  }

  /** Deletes the record if it is still `deleting`. */
  async deleteRemoved(tx: Transaction, id: string): Promise<void> {
    await tx.delete(DatabaseEntity, { id, status: 'deleting' });
  }

  /** Records where the database's server answers. */
  async setHost(id: string, host: string): Promise<void> {
    await this.dataSource.manager.update(DatabaseEntity, { id }, { host });
  }

  /** Writes what was measured or decided of the database's storage. */
  async updateStorage(id: string, fields: StorageFields): Promise<void> {
    await this.dataSource.manager.update(DatabaseEntity, { id }, fields);
  }

  /** Records the database fenced, unless it was already; false then. */
  async recordFenced(tx: Transaction, id: string, usedBytes: number): Promise<boolean> {
    const moved = await tx.update(
      DatabaseEntity,
      { id, storageFencedAt: IsNull() },
      { storageFencedAt: new Date(), storageUsedBytes: usedBytes, storageCleanupUntil: null },
    );
    return moved.affected === 1;
  }

  /** moveDatabase outside any transaction. */
  move(
    databaseId: string,
    move: Exclude<DatabaseMove, 'remove'>,
    fields: DatabaseMoveFields = {},
  ): Promise<boolean> {
    return moveDatabase(this.dataSource.manager, databaseId, move, fields);
  }
}

/** Makes `move` on the database if its status is one the move starts from. */
export async function moveDatabase(
  tx: Transaction,
  databaseId: string,
  move: Exclude<DatabaseMove, 'remove'>,
  fields: DatabaseMoveFields = {},
): Promise<boolean> {
  const moved = await tx.update(
    DatabaseEntity,
    { id: databaseId, status: In([...DATABASE_MOVES[move].from]) },
    { status: DATABASE_MOVES[move].to, ...fields },
  );
  return moved.affected === 1;
}

/**
 * Moves the databases to `deleting`, in one statement, so of two deletes at once only one
 * moves a record: answers those it moved.
 */
export function removeDatabases(
  tx: Transaction,
  databaseIds: string[],
): Promise<{ id: string; project_id: string }[]> {
  return queryRows<{ id: string; project_id: string }>(
    tx,
    `UPDATE provisioner.databases SET status = 'deleting', updated_at = now()
      WHERE id = ANY($1) AND status = ANY($2)
      RETURNING id, project_id`,
    [databaseIds, [...DATABASE_MOVES.remove.from]],
  );
}
