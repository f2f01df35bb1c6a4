import { EmptyDto, rpc } from '../catalogue.js';
import type { Deleted } from '../projects/projects.types.js';
import {
  CreateDatabaseRequest,
  RestorePointRequest,
  DatabaseIdRef,
  UpdateDatabaseRequest,
  DatabaseRef,
  ProjectRef,
} from './databases.messages.js';
import type {
  BackupSource,
  BranchList,
  ConnectionDetails,
  Database,
  DatabaseList,
  RunningDatabase,
} from './databases.types.js';

/** Message patterns answered by database-provisioner. */
export const DATABASE_PATTERNS = {
  /** A new database, status provisioning. */
  create: rpc<CreateDatabaseRequest, Database>(
    'databases',
    'databases.create',
    CreateDatabaseRequest,
  ),
  list: rpc<ProjectRef, DatabaseList>('databases', 'databases.list', ProjectRef),
  get: rpc<DatabaseRef, Database>('databases', 'databases.get', DatabaseRef, [
    'api-gateway',
    'backup-service',
    'pitr-worker',
  ]),
  /** Moves or clears the expiry (docs/api/databases.md#changing-a-database). */
  update: rpc<UpdateDatabaseRequest, Database>(
    'databases',
    'databases.update',
    UpdateDatabaseRequest,
  ),
  /** The databases branched from it (docs/api/databases.md#branches). */
  branches: rpc<DatabaseRef, BranchList>('databases', 'databases.branches', DatabaseRef),
  /** Needs status running. */
  url: rpc<DatabaseRef, ConnectionDetails>('databases', 'databases.url', DatabaseRef),
  /** A new password for the login role; answers the connection details, as url does after. */
  rotateCredentials: rpc<DatabaseRef, ConnectionDetails>(
    'databases',
    'databases.rotate-credentials',
    DatabaseRef,
  ),
  delete: rpc<DatabaseRef, Deleted>('databases', 'databases.delete', DatabaseRef),
  /** Lift a fenced database's fence for a cleanup window. */
  storageCleanup: rpc<DatabaseRef, Database>('databases', 'databases.storage-cleanup', DatabaseRef),
  /** The deployment's CA certificate, which issues the servers' certificates. */
  caCertificate: rpc<EmptyDto, { pem: string }>('databases', 'databases.ca-certificate', EmptyDto),
  /** How a backup or receiver reaches the server (needs status running); between services only. */
  backupSource: rpc<DatabaseIdRef, BackupSource>(
    'databases',
    'databases.backup-source',
    DatabaseIdRef,
    ['backup-service', 'pitr-worker'],
  ),
  /** pg_create_restore_point on the database's server (pitr-worker); its LSN, `X/XXXXXXXX`. */
  createRestorePoint: rpc<RestorePointRequest, { lsn: string }>(
    'databases',
    'databases.create-restore-point',
    RestorePointRequest,
    ['pitr-worker'],
  ),
  /** Every running database, for schedules. */
  running: rpc<EmptyDto, { databases: RunningDatabase[] }>(
    'databases',
    'databases.running',
    EmptyDto,
    ['backup-service'],
  ),
} as const;
