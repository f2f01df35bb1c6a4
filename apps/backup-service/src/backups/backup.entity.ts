import type { BackupStatus, BackupType } from '@pgcloud/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** bigint columns arrive as strings (they may pass 2^53); sizes never do. */
const bigintAsNumber = {
  to: (value: number) => value,
  from: (value: string | null) => (value === null ? 0 : Number(value)),
};

/** A base backup of a database and its object in S3. */
@Entity({ schema: 'backups', name: 'backups' })
export class BackupEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'database_id', type: 'text' })
  databaseId: string;

  @Column({ name: 'project_id', type: 'text' })
  projectId: string;

  @Column({ name: 'owner_id', type: 'text' })
  ownerId: string;

  /** For the download's file name: a database's name never changes. */
  @Column({ name: 'database_name', type: 'text' })
  databaseName: string;

  @Column({ type: 'text' })
  type: BackupType;

  @Column({ type: 'text' })
  status: BackupStatus;

  @Column({ name: 'object_key', type: 'text' })
  objectKey: string;

  @Column({ name: 'size_bytes', type: 'bigint', transformer: bigintAsNumber })
  sizeBytes: number;

  @Column({ name: 'checksum_sha256', type: 'text', nullable: true })
  checksumSha256: string | null;

  @Column({ name: 'start_lsn', type: 'text', nullable: true })
  startLsn: string | null;

  @Column({ name: 'end_lsn', type: 'text', nullable: true })
  endLsn: string | null;

  @Column({ type: 'integer', nullable: true })
  timeline: number | null;

  /** Automated backups: the schedule period they belong to (see schedule/backup-schedule.ts). */
  @Column({ name: 'schedule_slot', type: 'bigint', nullable: true })
  scheduleSlot: string | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;
}
