import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { BackupStatus } from '@pgcloud/contracts';
import type { JobRunnerOptions } from '@pgcloud/jobs';
import { JobRunner } from '@pgcloud/jobs';
import { DataSource, In } from 'typeorm';
import type { EntityManager } from 'typeorm';
import type { BackupMove, BackupMoveFields } from './backup-lifecycle.js';
import { BACKUP_MOVES, backupMayMove } from './backup-lifecycle.js';
import { BackupEntity } from './backup.entity.js';
import { COUNTED_STATUSES } from './manual-backup-quota.js';

/** A transaction's handle, for the methods here that run inside a caller's transaction. */
export type Transaction = EntityManager;

/** A backup's record as it is written, before its job takes it up. */
export type NewBackup = Pick<
  BackupEntity,
  | 'id'
  | 'databaseId'
  | 'projectId'
  | 'ownerId'
  | 'databaseName'
  | 'type'
  | 'status'
  | 'objectKey'
  | 'sizeBytes'
  | 'scheduleSlot'
  | 'expiresAt'
>;

/** An expired backup as the sweep pages through them. */
export type ExpiredBackupRow = Pick<
  BackupEntity,
  'id' | 'databaseId' | 'status' | 'createdAt' | 'completedAt' | 'expiresAt'
>;

// Every replica ticks; the one that takes this lock does the round, the others skip it.
const SCHEDULE_LOCK = 'backups.schedule';

/**
 * backups.backups: a database's backups, the manual quota's count, the schedule's
 * lookups and turn, removal and expiry. Every write of a backup's `status` is `move`'s,
 * through the lifecycle's table (backup-lifecycle.ts). Methods that a caller runs inside
 * its transaction take that transaction.
 */
@Injectable()
export class BackupsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction; pass it to the methods that take one. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * A runner of the jobs in this database's jobs table (libs/jobs), on this repository's
   * DataSource, so that no other file injects one.
   */
  jobRunner(options: Omit<JobRunnerOptions, 'dataSource'>): JobRunner {
    return new JobRunner({ ...options, dataSource: this.dataSource });
  }

  /** The database's backups, newest first. */
  listNewestFirst(databaseId: string): Promise<BackupEntity[]> {
    return this.dataSource.manager.find(BackupEntity, {
      where: { databaseId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  /** The database's backups, oldest first. */
  listOldestFirst(databaseId: string): Promise<BackupEntity[]> {
    return this.dataSource.manager.find(BackupEntity, {
      where: { databaseId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  find(id: string, tx?: Transaction): Promise<BackupEntity | null> {
    return (tx ?? this.dataSource.manager).findOneBy(BackupEntity, { id });
  }

  /** The backup if it is one of the database's. */
  findOfDatabase(id: string, databaseId: string): Promise<BackupEntity | null> {
    return this.dataSource.manager.findOneBy(BackupEntity, { id, databaseId });
  }

  /** The database's newest completed backup, manual or automated. */
  newestCompleted(databaseId: string): Promise<BackupEntity | null> {
    return this.dataSource.manager.findOne(BackupEntity, {
      where: { databaseId, status: 'completed' },
      order: { completedAt: 'DESC', id: 'DESC' },
    });
  }

  /**
   * Writes a backup record, then `queue`s its job, in one transaction, once `allowed` has
   * not thrown. For a manual backup `allowed` is told how many of the database's manual
   * backups count against its quota (undefined for others).
   */
  async insert(
    backup: NewBackup,
    allowed: (keptManual: number | undefined) => void,
    queue: (tx: Transaction) => Promise<void>,
  ): Promise<BackupEntity> {
    const record = this.dataSource.manager.create(BackupEntity, backup);
    await this.dataSource.transaction(async (manager) => {
      let kept: number | undefined;
      if (record.type === 'manual') {
        // Manual backups of one database take turns, so two at once cannot both pass the
        // quota. The two-key form keeps this lock apart from other services' one-key locks.
        await manager.query(
          "SELECT pg_advisory_xact_lock(hashtext('backups.manual'), hashtext($1))",
          [record.databaseId],
        );
        kept = await this.countKeptManual(record.databaseId, manager);
      }
      allowed(kept);
      await manager.insert(BackupEntity, record);
      await queue(manager);
    });
    return this.dataSource.manager.findOneByOrFail(BackupEntity, { id: record.id });
  }

  /** The manual backups of a database that count against its quota (manual-backup-quota.ts). */
  countKeptManual(databaseId: string, tx?: Transaction): Promise<number> {
    return (tx ?? this.dataSource.manager).countBy(BackupEntity, {
      databaseId,
      type: 'manual',
      status: In([...COUNTED_STATUSES]),
    });
  }

  /**
   * Makes `move` on the backup if its status is one the move starts from (`from` narrows
   * them, as a caller that read the status does). False when the backup was elsewhere. A
   * move the lifecycle's table does not hold is refused before any SQL; the status written
   * is the table's (`fields` cannot hold one).
   */
  async move(
    tx: Transaction,
    backupId: string,
    move: BackupMove,
    fields: BackupMoveFields = {},
    from: readonly BackupStatus[] = BACKUP_MOVES[move].from,
  ): Promise<boolean> {
    const refused = from.filter((status) => !backupMayMove(status, move));
    if (refused.length > 0) throw new Error(`a backup cannot ${move} from ${refused.join(', ')}`);
    const moved = await tx.update(
      BackupEntity,
      { id: backupId, status: In([...from]) },
      { status: BACKUP_MOVES[move].to, ...fields },
    );
    return moved.affected === 1;
  }

  /**
   * Deletes the backup's record once `whileLocked` (given it) has run with the record
   * locked: a backup job finishing meanwhile waits, then finds it gone. False when it was
   * gone already.
   */
  async deleteLocked(
    backupId: string,
    whileLocked: (record: BackupEntity) => Promise<void>,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const record = await manager.findOne(BackupEntity, {
        where: { id: backupId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!record) return false;
      await whileLocked(record);
      await manager.delete(BackupEntity, { id: record.id });
      return true;
    });
  }

  /** The ids of the database's backups, with its project. */
  listForRemoval(databaseId: string): Promise<Pick<BackupEntity, 'id' | 'projectId'>[]> {
    return this.dataSource
      .getRepository(BackupEntity)
      .find({ select: { id: true, projectId: true }, where: { databaseId } });
  }

  /**
   * Runs `work` if this replica takes the schedule's lock, held by a transaction until
   * `work` is done; when another replica holds it, does nothing.
   */
  async inScheduleTurn(work: () => Promise<void>): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const [row] = await manager.query<{ locked: boolean }[]>(
        'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
        [SCHEDULE_LOCK],
      );
      if (!row?.locked) return;
      await work();
    });
  }

  /**
   * Which of these databases have a backup completed since `since`, or one made since then
   * that is still pending or running.
   */
  async backedUpSince(databaseIds: string[], since: Date): Promise<Set<string>> {
    if (databaseIds.length === 0) return new Set();
    const rows = await this.dataSource.query<{ database_id: string }[]>(
      `SELECT DISTINCT database_id FROM backups.backups
        WHERE database_id = ANY($1)
          AND ((status = 'completed' AND completed_at > $2)
            OR (status IN ('pending', 'running') AND created_at > $2))`,
      [databaseIds, since],
    );
    return new Set(rows.map((row) => row.database_id));
  }

  /** Which of these databases have a completed backup. */
  async withCompleted(databaseIds: string[]): Promise<string[]> {
    if (databaseIds.length === 0) return [];
    const rows = await this.dataSource.query<{ database_id: string }[]>(
      `SELECT DISTINCT database_id FROM backups.backups
        WHERE database_id = ANY($1) AND status = 'completed'`,
      [databaseIds],
    );
    return rows.map((row) => row.database_id);
  }

  /** The backups of these databases in any of these schedule slots. */
  inSlots(
    databaseIds: string[],
    slots: string[],
  ): Promise<Pick<BackupEntity, 'databaseId' | 'scheduleSlot'>[]> {
    return this.dataSource.getRepository(BackupEntity).find({
      select: { databaseId: true, scheduleSlot: true },
      where: { databaseId: In(databaseIds), scheduleSlot: In(slots) },
    });
  }

  /** One page of `limit` expired, finished backups, by (expires_at, id) after `after`. */
  expiredPage(
    now: Date,
    after: Pick<BackupEntity, 'expiresAt' | 'id'> | undefined,
    limit: number,
  ): Promise<ExpiredBackupRow[]> {
    const query = this.dataSource
      .getRepository(BackupEntity)
      .createQueryBuilder('backup')
      .select([
        'backup.id',
        'backup.databaseId',
        'backup.status',
        'backup.createdAt',
        'backup.completedAt',
        'backup.expiresAt',
      ])
      .where('backup.expiresAt < :now', { now })
      .andWhere('backup.status IN (:...finished)', { finished: ['completed', 'failed'] })
      .orderBy('backup.expiresAt', 'ASC')
      .addOrderBy('backup.id', 'ASC')
      .limit(limit);
    if (after)
      query.andWhere('(backup.expiresAt, backup.id) > (:afterExpiry, :afterId)', {
        afterExpiry: after.expiresAt,
        afterId: after.id,
      });
    return query.getMany();
  }
}
