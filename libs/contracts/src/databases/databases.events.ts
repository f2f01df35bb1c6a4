import { IsIn, IsInt, IsOptional, IsString, Min } from 'class-validator';
import { event } from '../catalogue.js';
import type { DatabaseStatus } from './databases.types.js';
import { DATABASE_STATUSES } from './databases.types.js';

/** Payload of DATABASE_EVENTS.statusChanged. */
export class DatabaseStatusChanged {
  @IsString()
  database_id!: string;

  @IsString()
  project_id!: string;

  @IsIn(DATABASE_STATUSES)
  status!: DatabaseStatus;

  @IsOptional()
  @IsString()
  error?: string;
}

/** Payload of DATABASE_EVENTS.created and DATABASE_EVENTS.deleted. */
export class DatabaseEvent {
  @IsString()
  database_id!: string;

  @IsString()
  project_id!: string;
}

/** Payload of DATABASE_EVENTS.storageFenced. */
export class DatabaseStorageFenced extends DatabaseEvent {
  @IsInt()
  @Min(0)
  used_bytes!: number;

  @IsInt()
  @Min(0)
  limit_bytes!: number;
}

/** Events published by database-provisioner on EVENTS_EXCHANGE. */
export const DATABASE_EVENTS = {
  /** A database moved to another status. */
  statusChanged: event('database.status-changed', DatabaseStatusChanged, 'database-provisioner'),
  /** A database record was made (a create, or a restore into a new database). */
  created: event('database.created', DatabaseEvent, 'database-provisioner'),
  /** A database left the API; its server goes, and owners of its parts (backups, WAL) clean up. */
  deleted: event('database.deleted', DatabaseEvent, 'database-provisioner'),
  /** A server passed its storage limit by the grace: held read-only, no write of any kind. */
  storageFenced: event('database.storage_fenced', DatabaseStorageFenced, 'database-provisioner'),
  /** Its expires_at passed: it is removed as a DELETE removes it (database.deleted follows). */
  expired: event('database.expired', DatabaseEvent, 'database-provisioner'),
  /** The login role has a new password: the old one is refused for new sessions. */
  credentialsRotated: event('database.credentials_rotated', DatabaseEvent, 'database-provisioner'),
} as const;
