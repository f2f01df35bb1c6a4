import type { Database } from '@pgcloud/contracts';
import type { DatabaseEntity } from './database.entity.js';

/** What a new database's record is made from; a branch names its parent too. */
export type NewDatabaseFields = Pick<
  DatabaseEntity,
  'ownerId' | 'projectId' | 'name' | 'region' | 'config'
> &
  Partial<
    Pick<DatabaseEntity, 'expiresAt' | 'parentDatabaseId' | 'parentName' | 'parentProjectId'>
  >;

/** A database as the API shows it. */
export function toDatabase(record: DatabaseEntity): Database {
  const database: Database = {
    id: record.id,
    project_id: record.projectId,
    name: record.name,
    platform_service_id: record.platformServiceId,
    region: record.region,
    status: record.status === 'deleting' ? 'failed' : record.status,
    config: record.config,
    created_at: record.createdAt.toISOString(),
    storage: {
      used_bytes: record.storageUsedBytes,
      limit_bytes: record.config.storage * 1024 ** 3,
      state: record.storageFencedAt ? 'fenced' : record.storageFull ? 'read_only' : 'ok',
    },
    last_proven_restorable: record.lastProvenRestorable,
    expires_at: record.expiresAt?.toISOString() ?? null,
    parent: record.parentDatabaseId
      ? {
          database_id: record.parentDatabaseId,
          name: record.parentName ?? '',
          project_id: record.parentProjectId ?? '',
          lsn: record.parentLsn,
          at: record.parentAt?.toISOString() ?? null,
        }
      : null,
  };
  if (record.storageCleanupUntil && record.storageCleanupUntil > new Date())
    database.storage.cleanup_until = record.storageCleanupUntil.toISOString();
  if (record.status === 'failed' && record.error) database.error = record.error;
  return database;
}
