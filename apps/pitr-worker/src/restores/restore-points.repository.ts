import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RestorePointEntity } from './restore-point.entity.js';

/** Which archive a restore point belongs to: its database, timeline and start. */
export interface ArchiveOfPoints {
  databaseId: string;
  timeline: number;
  archiveStartLsn: bigint;
}

/** What a turn at one archive's restore points may read and write. */
export interface RestorePointsTurn {
  exists(name: string): Promise<boolean>;
  count(): Promise<number>;
  insert(name: string, lsn: bigint): Promise<RestorePointEntity>;
}

/** pitr.restore_points: the restore points of each archive. */
@Injectable()
export class RestorePointsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` with the database's restore points to itself, in one transaction: one
   * point at a time per database, so a name is checked, written and recorded together.
   */
  inTurn<T>(archive: ArchiveOfPoints, work: (turn: RestorePointsTurn) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `pitr.restore-points:${archive.databaseId}`,
      ]);
      return work({
        exists: (name) => manager.existsBy(RestorePointEntity, { ...archive, name }),
        count: () => manager.countBy(RestorePointEntity, archive),
        insert: (name, lsn) =>
          manager.save(RestorePointEntity, { ...archive, name, lsn, createdAt: new Date() }),
      });
    });
  }

  /** The archive's points, oldest first. */
  list(archive: ArchiveOfPoints): Promise<RestorePointEntity[]> {
    return this.dataSource.manager.find(RestorePointEntity, {
      where: archive,
      order: { lsn: 'ASC' },
    });
  }

  find(archive: ArchiveOfPoints, name: string): Promise<RestorePointEntity | null> {
    return this.dataSource.manager.findOneBy(RestorePointEntity, { ...archive, name });
  }
}
