import type {
  ArchiveHealthChanged,
  BackupStatusChanged,
  DatabaseEvent,
  DatabaseStatusChanged,
  DatabaseStorageFenced,
  DrillFinished,
  EventDef,
  RestoreFinished,
  WebhookEventType,
} from '@pgcloud/contracts';
import {
  BACKUP_EVENTS,
  DATABASE_EVENTS,
  DRILL_EVENTS,
  PITR_EVENTS,
  RESTORE_EVENTS,
} from '@pgcloud/contracts';

/**
 * A webhook event made from a domain event: its type, the project whose endpoints get it,
 * the database it is ordered by, and its data: ids and state, never a secret, a link or
 * free text (errors and details stay behind the API).
 */
export interface WebhookEvent {
  type: WebhookEventType;
  projectId: string;
  databaseId: string;
  data: Record<string, unknown>;
}

/** A domain event this service listens to, and the webhook event (if any) it makes. */
export interface WebhookSource {
  def: EventDef<object>;
  toWebhook(payload: object): WebhookEvent | undefined;
}

function source<T extends object>(
  def: EventDef<T>,
  toWebhook: (payload: T) => WebhookEvent | undefined,
): WebhookSource {
  // The listener calls it with the payload its def validated: a T.
  return { def, toWebhook };
}

function event(
  type: WebhookEventType,
  { project_id, database_id }: DatabaseEvent,
  state: Record<string, unknown> = {},
): WebhookEvent {
  return {
    type,
    projectId: project_id,
    databaseId: database_id,
    data: { project_id, database_id, ...state },
  };
}

const DATABASE_STATUS_TYPES: Partial<Record<DatabaseStatusChanged['status'], WebhookEventType>> = {
  running: 'database.running',
  failed: 'database.failed',
};

const BACKUP_STATUS_TYPES: Partial<Record<BackupStatusChanged['status'], WebhookEventType>> = {
  completed: 'backup.completed',
  failed: 'backup.failed',
};

const RESTORE_TYPES: Record<RestoreFinished['status'], WebhookEventType> = {
  completed: 'restore.completed',
  failed: 'restore.failed',
  cancelled: 'restore.cancelled',
};

function databaseStatus(payload: DatabaseStatusChanged): WebhookEvent | undefined {
  const type = DATABASE_STATUS_TYPES[payload.status];
  return type && event(type, payload, { status: payload.status });
}

function backupStatus(payload: BackupStatusChanged): WebhookEvent | undefined {
  const type = BACKUP_STATUS_TYPES[payload.status];
  return type && event(type, payload, { backup_id: payload.backup_id, status: payload.status });
}

function restoreFinished(payload: RestoreFinished): WebhookEvent {
  return event(RESTORE_TYPES[payload.status], payload, {
    restore_id: payload.restore_id,
    status: payload.status,
    in_place: payload.in_place,
  });
}

function drillFinished(type: WebhookEventType) {
  return (payload: DrillFinished): WebhookEvent =>
    event(type, payload, {
      drill_id: payload.drill_id,
      status: payload.status,
      ...(payload.backup_id ? { backup_id: payload.backup_id } : {}),
      checks: payload.checks.map(({ name, passed }) => ({ name, passed })),
    });
}

function archiveHealth(type: WebhookEventType) {
  return (payload: ArchiveHealthChanged): WebhookEvent =>
    event(type, payload, { state: payload.state });
}

function storageFenced(payload: DatabaseStorageFenced): WebhookEvent {
  return event('database.storage_fenced', payload, {
    used_bytes: payload.used_bytes,
    limit_bytes: payload.limit_bytes,
  });
}

/** Every domain event that makes webhook events (docs/api/webhooks.md#events). */
export const WEBHOOK_SOURCES: readonly WebhookSource[] = [
  source(DATABASE_EVENTS.statusChanged, databaseStatus),
  source(DATABASE_EVENTS.expired, (payload) => event('database.expired', payload)),
  source(DATABASE_EVENTS.storageFenced, storageFenced),
  source(DATABASE_EVENTS.credentialsRotated, (payload) =>
    event('database.credentials_rotated', payload),
  ),
  source(BACKUP_EVENTS.statusChanged, backupStatus),
  source(RESTORE_EVENTS.finished, restoreFinished),
  source(DRILL_EVENTS.passed, drillFinished('drill.passed')),
  source(DRILL_EVENTS.failed, drillFinished('drill.failed')),
  source(PITR_EVENTS.archiveStale, archiveHealth('archive.stale')),
  source(PITR_EVENTS.archiveBroken, archiveHealth('archive.broken')),
  source(PITR_EVENTS.archiveHealthy, archiveHealth('archive.healthy')),
];

/** The body every attempt of an event sends, exactly as it is signed. */
export function webhookBody(event: WebhookEvent, at: Date): string {
  return JSON.stringify({ type: event.type, timestamp: at.toISOString(), data: event.data });
}
