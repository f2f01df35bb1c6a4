import { Column, Entity, PrimaryColumn } from 'typeorm';
import { lsnColumn } from '../archive/archive.entity.js';

/** A restore point of one archive: the archive's timeline and first position name it. */
@Entity({ schema: 'pitr', name: 'restore_points' })
export class RestorePointEntity {
  @PrimaryColumn({ name: 'database_id', type: 'text' })
  databaseId: string;

  @PrimaryColumn({ type: 'integer' })
  timeline: number;

  @PrimaryColumn({ name: 'archive_start_lsn', type: 'bigint', transformer: lsnColumn })
  archiveStartLsn: bigint;

  @PrimaryColumn({ type: 'text' })
  name: string;

  /** The end of its record in the WAL, as pg_create_restore_point answered it. */
  @Column({ type: 'bigint', transformer: lsnColumn })
  lsn: bigint;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
