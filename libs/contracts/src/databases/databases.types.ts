/** Where a database is in its life (docs/api/databases.md). */
export const DATABASE_STATUSES = ['provisioning', 'running', 'restoring', 'failed'] as const;
export type DatabaseStatus = (typeof DATABASE_STATUSES)[number];

/** A server's size as stored and shown. */
export interface DatabaseConfig {
  cpu: number;
  memory: number;
  storage: number;
}

/** A database as the API shows it. */
export interface Database {
  id: string;
  project_id: string;
  name: string;
  platform_service_id: string;
  region: string;
  status: DatabaseStatus;
  config: DatabaseConfig;
  created_at: string;
  /** Why the database failed, when it did. */
  error?: string;
  storage: DatabaseStorage;
}

/** `ok`; `read_only` at the limit (an explicit `BEGIN READ WRITE` still works); `fenced`. */
export const STORAGE_STATES = ['ok', 'read_only', 'fenced'] as const;
export type StorageState = (typeof STORAGE_STATES)[number];

/** What the database's server takes against its limit, as the last storage watch saw it. */
export interface DatabaseStorage {
  used_bytes: number;
  limit_bytes: number;
  state: StorageState;
  /** While a cleanup window lifts the fence: when it closes. */
  cleanup_until?: string;
}

/** GET .../databases/{name}/url. */
export interface ConnectionDetails {
  host: string;
  port: number;
  database: string;
  user: string;
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
