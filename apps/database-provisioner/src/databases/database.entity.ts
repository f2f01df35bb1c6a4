import type { DatabaseConfig, DatabaseStatus, ProvenRestorable } from '@pgcloud/contracts';
import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** API statuses plus `deleting`: gone from the API, its server still being removed. */
export type DatabaseRecordStatus = DatabaseStatus | 'deleting';

/** A database and the server that runs it. */
@Entity({ schema: 'provisioner', name: 'databases' })
export class DatabaseEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'project_id', type: 'text' })
  projectId: string;

  @Column({ name: 'owner_id', type: 'text' })
  ownerId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  region: string;

  @Column({ name: 'platform_service_id', type: 'text' })
  platformServiceId: string;

  @Column({ type: 'text' })
  status: DatabaseRecordStatus;

  @Column({ type: 'jsonb' })
  config: DatabaseConfig;

  /** Where clients reach the server, as its driver answered; null until it was made. */
  @Column({ type: 'text', nullable: true })
  host: string | null;

  @Column({ type: 'integer' })
  port: number;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Made read-only by the storage watch (storage/storage-watch.ts). */
  @Column({ name: 'storage_full', type: 'boolean', default: false })
  storageFull: boolean;

  /** What its databases took at the storage watch's last look. */
  @Column({
    name: 'storage_used_bytes',
    type: 'bigint',
    default: 0,
    transformer: { to: (value: number) => value, from: (value: string) => Number(value) },
  })
  storageUsedBytes: number;

  /** Held read-only past its limit and the grace, since then; null when not fenced. */
  @Column({ name: 'storage_fenced_at', type: 'timestamptz', nullable: true })
  storageFencedAt: Date | null;

  /** When its owner last opened a cleanup window (one an hour). */
  @Column({ name: 'storage_cleanup_at', type: 'timestamptz', nullable: true })
  storageCleanupAt: Date | null;

  /** The fence is lifted for cleanup until then; null when no window is open. */
  @Column({ name: 'storage_cleanup_until', type: 'timestamptz', nullable: true })
  storageCleanupUntil: Date | null;

  /** What the server used when the last cleanup window opened. */
  @Column({
    name: 'storage_cleanup_from_bytes',
    type: 'bigint',
    nullable: true,
    transformer: {
      to: (v: number | null) => v,
      from: (v: string | null) => (v === null ? null : Number(v)),
    },
  })
  storageCleanupFromBytes: number | null;

  /** Its last passed restore drill (docs/api/drills.md); null until one passed. */
  @Column({ name: 'last_proven_restorable', type: 'jsonb', nullable: true })
  lastProvenRestorable: ProvenRestorable | null;

  /** When it is deleted on its own (docs/api/databases.md#expiry); null for never. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** A branch: the database it was made from (docs/api/databases.md#branches); else null. */
  @Column({ name: 'parent_database_id', type: 'text', nullable: true })
  parentDatabaseId: string | null;

  /** The parent's name and project when the branch was made. */
  @Column({ name: 'parent_name', type: 'text', nullable: true })
  parentName: string | null;

  @Column({ name: 'parent_project_id', type: 'text', nullable: true })
  parentProjectId: string | null;

  /** The copied point: its WAL position and time, once the branch runs. */
  @Column({ name: 'parent_lsn', type: 'text', nullable: true })
  parentLsn: string | null;

  @Column({ name: 'parent_at', type: 'timestamptz', nullable: true })
  parentAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** A database's secrets, sealed with the deployment's key (AES-256-GCM). */
@Entity({ schema: 'provisioner', name: 'credentials' })
export class CredentialsEntity {
  @PrimaryColumn({ name: 'database_id', type: 'text' })
  databaseId: string;

  @Column({ name: 'password_sealed', type: 'text' })
  passwordSealed: string;

  @Column({ name: 'replication_password_sealed', type: 'text' })
  replicationPasswordSealed: string;
}
