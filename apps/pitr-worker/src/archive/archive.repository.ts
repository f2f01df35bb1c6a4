import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { queryRows } from '@pgcloud/postgres';
import { DataSource, In, IsNull } from 'typeorm';
import type { EntityManager } from 'typeorm';
import type { ArchiveState } from '@pgcloud/contracts';
import { ArchiveEntity } from './archive.entity.js';

/** A transaction's handle, for the methods here that run inside a caller's transaction. */
export type Transaction = EntityManager;

/** What a check of the archive in the object store found. */
export interface ArchiveCheck {
  state: ArchiveState;
  problem: string | null;
  checkedAt: Date;
  newestObjectAt: Date | null;
  /** Broken: how far the archive is whole (archiveReach); null otherwise. */
  intactUntil: Date | null;
  intactLsn: bigint | null;
}

/** Who a newly enabled archive belongs to, and how long it keeps WAL. */
export interface ArchiveEnabling {
  databaseId: string;
  projectId: string;
  ownerId: string;
  databaseName: string;
  retentionDays: number;
}

/**
 * The rows of pitr.archives as PITR's settings, window, restores and retention see them
 * (the receiver's lease and progress are ReceiverLeases' and ReceiverProgress'). Methods
 * that a caller runs inside its transaction take that transaction's manager.
 */
@Injectable()
export class ArchiveRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction; pass its manager to the methods that take one. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  find(databaseId: string): Promise<ArchiveEntity | null> {
    return this.dataSource.manager.findOneBy(ArchiveEntity, { databaseId });
  }

  /** The archive, failing when the database never had PITR. */
  get(databaseId: string): Promise<ArchiveEntity> {
    return this.dataSource.manager.findOneByOrFail(ArchiveEntity, { databaseId });
  }

  findEnabled(databaseId: string): Promise<ArchiveEntity | null> {
    return this.dataSource.manager.findOneBy(ArchiveEntity, { databaseId, enabled: true });
  }

  all(): Promise<ArchiveEntity[]> {
    return this.dataSource.manager.find(ArchiveEntity);
  }

  enabledAmong(databaseIds: string[]): Promise<ArchiveEntity[]> {
    return this.dataSource.manager.findBy(ArchiveEntity, {
      databaseId: In(databaseIds),
      enabled: true,
    });
  }

  /** The row, locked until the transaction ends: enable and a receiver never start it twice. */
  lockForStart(databaseId: string, manager: EntityManager): Promise<ArchiveEntity | null> {
    return manager.findOne(ArchiveEntity, {
      where: { databaseId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** The row if it is still disabled, locked until the transaction ends (an enable waits). */
  lockDisabled(databaseId: string, manager: EntityManager): Promise<ArchiveEntity | null> {
    return manager.findOne(ArchiveEntity, {
      where: { databaseId, enabled: false },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** Writes what the starter set on a row it holds locked. */
  async saveStarted(archive: ArchiveEntity, manager: EntityManager): Promise<void> {
    await manager.save(archive);
  }

  async delete(databaseId: string, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource.manager).delete(ArchiveEntity, { databaseId });
  }

  /**
   * Enables PITR: a new row, or a disabled one begun afresh (a new receiver generation,
   * position and window forgotten). False when it was enabled already (by a request that
   * came in meanwhile).
   */
  async enable(enabling: ArchiveEnabling): Promise<boolean> {
    const rows = await queryRows<{ database_id: string }>(
      this.dataSource,
      `INSERT INTO pitr.archives AS a
              (database_id, project_id, owner_id, database_name, enabled, retention_days,
               receiver_status, receiver_started_at)
       VALUES ($1, $2, $3, $4, true, $5, 'starting', now())
       ON CONFLICT (database_id) DO UPDATE
          SET enabled = true, retention_days = $5, owner_id = $3, base_backup_id = NULL,
              timeline = NULL, start_lsn = NULL, archived_lsn = NULL, keep_from = NULL,
              window_to = NULL, latest_wal_time = NULL, last_wal_file = NULL,
              enabled_at = now(), disabled_at = NULL, receiver_status = 'starting',
              receiver_started_at = now(), receiver_errors = 0, bytes_received = 0,
              receiver_generation = a.receiver_generation + 1,
              paused_for_restore = false, paused_at = NULL, slot_to_drop = false
        WHERE NOT a.enabled
       RETURNING database_id`,
      [
        enabling.databaseId,
        enabling.projectId,
        enabling.ownerId,
        enabling.databaseName,
        enabling.retentionDays,
      ],
    );
    return rows.length > 0;
  }

  /** An enable whose archive never began: PITR off again, its slot (if made) to drop. */
  async abandonStart(databaseId: string): Promise<void> {
    await this.dataSource.manager.update(
      ArchiveEntity,
      { databaseId, startLsn: IsNull() },
      { enabled: false, receiverStatus: 'stopped', disabledAt: new Date(), slotToDrop: true },
    );
  }

  /** Turns PITR off with its slot to drop; false when it was not on. */
  async disable(databaseId: string): Promise<boolean> {
    const moved = await this.dataSource.manager.update(
      ArchiveEntity,
      { databaseId, enabled: true },
      { enabled: false, receiverStatus: 'stopped', disabledAt: new Date(), slotToDrop: true },
    );
    return moved.affected === 1;
  }

  /** Turns PITR off for a database being removed (its server, and slot, go with it). */
  async disableForRemoval(databaseId: string): Promise<void> {
    await this.dataSource.manager.update(
      ArchiveEntity,
      { databaseId, enabled: true },
      { enabled: false, receiverStatus: 'stopped', disabledAt: new Date() },
    );
  }

  async setRetention(databaseId: string, retentionDays: number): Promise<void> {
    await this.dataSource.manager.update(ArchiveEntity, { databaseId }, { retentionDays });
  }

  /** The slot of a disabled archive is gone. */
  async slotDropped(databaseId: string): Promise<void> {
    await this.dataSource.manager.update(
      ArchiveEntity,
      { databaseId, enabled: false },
      { slotToDrop: false },
    );
  }

  /** The base backup the window rests on completed at `keepFrom` (backup-service asks). */
  async setKeepFrom(databaseId: string, keepFrom: Date): Promise<void> {
    await this.dataSource.manager.update(
      ArchiveEntity,
      { databaseId, enabled: true },
      { keepFrom },
    );
  }

  /** A new receiver generation: the replica running it restarts it, errors counted anew. */
  async restartReceiver(databaseId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives
          SET receiver_generation = receiver_generation + 1, receiver_status = 'starting',
              receiver_started_at = now(), receiver_errors = 0, bytes_received = 0
        WHERE database_id = $1 AND enabled`,
      [databaseId],
    );
  }

  /**
   * Holds the base backup completed at `from` and the WAL after it until `until`; an older
   * hold still in force stays, and the later end wins.
   */
  async holdForRestore(databaseId: string, from: Date, until: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives
          SET hold_from = CASE WHEN hold_until > now() AND hold_from < $2 THEN hold_from ELSE $2 END,
              hold_until = GREATEST(hold_until, $3)
        WHERE database_id = $1`,
      [databaseId, from, until],
    );
  }

  async pauseForRestore(databaseId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE pitr.archives
          SET paused_for_restore = true, paused_at = now(), receiver_status = 'stopped'
        WHERE database_id = $1`,
      [databaseId],
    );
  }

  async resumeAfterRestore(databaseId: string, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource.manager).query(
      `UPDATE pitr.archives
          SET paused_for_restore = false,
              receiver_status = CASE WHEN enabled THEN 'starting' ELSE 'stopped' END
        WHERE database_id = $1 AND paused_for_restore`,
      [databaseId],
    );
  }

  /**
   * Records a check of an enabled archive; answers the state it had before (null before the
   * first check), or undefined when the archive is no longer enabled. The row stays locked
   * until the transaction ends, so two checks never both see the same change.
   */
  async recordCheck(
    manager: EntityManager,
    databaseId: string,
    check: ArchiveCheck,
  ): Promise<ArchiveState | null | undefined> {
    const before = await manager.findOne(ArchiveEntity, {
      where: { databaseId, enabled: true },
      lock: { mode: 'pessimistic_write' },
    });
    if (!before) return undefined;
    await manager.update(
      ArchiveEntity,
      { databaseId },
      {
        archiveState: check.state,
        archiveProblem: check.problem,
        archiveCheckedAt: check.checkedAt,
        newestObjectAt: check.newestObjectAt,
        intactUntil: check.intactUntil,
        intactLsn: check.intactLsn,
      },
    );
    return before.archiveState;
  }
}
