import type { DrillCheck, DrillKind, DrillPhase, DrillStatus } from '@pgcloud/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A restore drill of a database (docs/api/drills.md). */
@Entity({ schema: 'provisioner', name: 'drills' })
export class DrillEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'database_id', type: 'text' })
  databaseId: string;

  @Column({ type: 'text' })
  kind: DrillKind;

  @Column({ type: 'text' })
  status: DrillStatus;

  /** Where its work is; a failed drill keeps the phase it failed in. */
  @Column({ type: 'text', default: 'queued' })
  phase: DrillPhase;

  /** The backup it restores, once planned. */
  @Column({ name: 'backup_id', type: 'text', nullable: true })
  backupId: string | null;

  /** With PITR: the moment replay goes to, as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  @Column({ name: 'target_time', type: 'text', nullable: true })
  targetTime: string | null;

  /** With PITR: where replay ended. */
  @Column({ name: 'target_lsn', type: 'text', nullable: true })
  targetLsn: string | null;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  checks: DrillCheck[];

  @Column({ name: 'restore_seconds', type: 'double precision', nullable: true })
  restoreSeconds: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Automated drills: the slot of the schedule it was made for. */
  @Column({ name: 'scheduled_for', type: 'timestamptz', nullable: true })
  scheduledFor: Date | null;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}
