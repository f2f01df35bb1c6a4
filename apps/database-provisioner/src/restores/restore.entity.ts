import type { RestoreKind, RestoreStatus } from '@pgcloud/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A restore of a database (its source): in place, or into a new database of the project. */
@Entity({ schema: 'provisioner', name: 'restores' })
export class RestoreEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'database_id', type: 'text' })
  databaseId: string;

  /** The new database a `target_database` restore builds; null for an in-place restore. */
  @Column({ name: 'target_database_id', type: 'text', nullable: true })
  targetDatabaseId: string | null;

  @Column({ name: 'target_database', type: 'text', nullable: true })
  targetDatabase: string | null;

  @Column({ type: 'text' })
  kind: RestoreKind;

  @Column({ name: 'backup_id', type: 'text', nullable: true })
  backupId: string | null;

  /** PITR: the target, to the microsecond, as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  @Column({ name: 'target_time', type: 'text', nullable: true })
  targetTime: string | null;

  @Column({ type: 'text' })
  status: RestoreStatus;

  @Column({ name: 'wal_files_applied', type: 'integer', nullable: true })
  walFilesApplied: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}
