import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { idSchema } from '../ids.js';
import { ProvenRestorable } from '../drills/drills.types.js';

/** Where a database is in its life (docs/api/databases.md). */
export const DATABASE_STATUSES = [
  'provisioning',
  'running',
  'restoring',
  'resizing',
  'failed',
] as const;
export type DatabaseStatus = (typeof DATABASE_STATUSES)[number];

/** A server's size as stored and shown. */
export class DatabaseConfig {
  @ApiProperty({ example: 1, description: 'vCPUs, 0.25-16 (Free: at most 1).' })
  cpu: number;

  @ApiProperty({ example: 1, description: 'GiB of memory, 0.25-64 (Free: at most 2).' })
  memory: number;

  @ApiProperty({ example: 10, description: 'GiB of storage, 1-1024 (Free: at most 10).' })
  storage: number;
}

/** `ok`; `read_only` at the limit (an explicit `BEGIN READ WRITE` still works); `fenced`. */
export const STORAGE_STATES = ['ok', 'read_only', 'fenced'] as const;
export type StorageState = (typeof STORAGE_STATES)[number];

/**
 * What the database's server takes against its storage limit, as the last storage watch
 * saw it (docs/api/databases.md#storage).
 */
export class DatabaseStorage {
  @ApiProperty({
    type: 'integer',
    example: 52_428_800,
    description: 'Bytes its databases take, as last measured (each reconcile pass).',
  })
  used_bytes: number;

  @ApiProperty({
    type: 'integer',
    example: 10_737_418_240,
    description: '`config.storage` in bytes.',
  })
  limit_bytes: number;

  @ApiProperty({
    enum: STORAGE_STATES,
    description:
      '`read_only` at the limit: new transactions are read-only, an explicit `BEGIN READ WRITE` still works. `fenced` past the limit by the grace: no write of any kind, until a restore brings the data under or the database is deleted.',
  })
  state: StorageState;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'While a cleanup window lifts the fence (POST .../storage/cleanup): when it closes.',
  })
  cleanup_until?: string;
}

/** A database as the API shows it. */
export class Database {
  @ApiProperty(idSchema('db'))
  id: string;

  @ApiProperty({ example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
  project_id: string;

  @ApiProperty({ example: 'orders' })
  name: string;

  @ApiProperty({ example: 'srv_k3v9x0q2m8t4b7w1c5zd', description: 'The server that runs it.' })
  platform_service_id: string;

  @ApiProperty({ example: 'local' })
  region: string;

  @ApiProperty({ enum: DATABASE_STATUSES })
  status: DatabaseStatus;

  @ApiProperty({ type: DatabaseConfig })
  config: DatabaseConfig;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiPropertyOptional({ description: 'Why it failed, when it did.' })
  error?: string;

  @ApiProperty({ type: DatabaseStorage })
  storage: DatabaseStorage;

  @ApiProperty({
    type: ProvenRestorable,
    nullable: true,
    description: 'Its last passed restore drill (docs/api/drills.md); null until one passed.',
  })
  last_proven_restorable: ProvenRestorable | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When it is deleted on its own (docs/api/databases.md#expiry); null for never.',
  })
  expires_at: string | null;

  @ApiProperty({
    type: () => DatabaseParent,
    nullable: true,
    description:
      'The database it was branched from (docs/api/databases.md#branches); null when none.',
  })
  parent: DatabaseParent | null;
}

/** The database a branch was made from, and the point it was copied at. */
export class DatabaseParent {
  @ApiProperty({ example: 'db_k3v9x0q2m8t4b7w1c5zd' })
  database_id: string;

  @ApiProperty({ example: 'shop' })
  name: string;

  @ApiProperty({ example: 'prj_k3v9x0q2m8t4b7w1c5zd' })
  project_id: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '0/3000148',
    description: "The copied point's WAL position; null until the branch is running.",
  })
  lsn: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the copied point was; null until the branch is running.',
  })
  at: string | null;
}

/** GET .../databases/{name}/branches: the databases branched from it. */
export class BranchList {
  @ApiProperty({ type: () => [Database] })
  branches: Database[];
}

/** GET /projects/{project_id}/databases. */
export class DatabaseList {
  @ApiProperty({ type: [Database] })
  databases: Database[];
}

/** GET .../databases/{name}/url. */
export class ConnectionDetails {
  @ApiProperty({ example: '127.0.0.1' })
  host: string;

  @ApiProperty({ type: 'integer', example: 20000 })
  port: number;

  @ApiProperty({ example: 'orders' })
  database: string;

  @ApiProperty({ example: 'orders' })
  user: string;

  @ApiProperty({
    example: 'postgresql://orders:<PASSWORD>@127.0.0.1:20000/orders?sslmode=require',
    description: 'Verify the server with the CA from GET /ca.pem.',
  })
  connection_string: string;
}

/**
 * databases.backup-source: how a backup reaches a running database's server over the
 * replication protocol (TLS, verified against the CA). Between services only: it holds
 * the replication role's password.
 */
export interface BackupSource {
  database_id: string;
  project_id: string;
  name: string;
  host: string;
  port: number;
  user: string;
  password: string;
  ca_pem: string;
}

/** A running database, as databases.running lists it for schedules. */
export interface RunningDatabase {
  database_id: string;
  project_id: string;
  owner_id: string;
  name: string;
}
