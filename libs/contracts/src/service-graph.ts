import { AUTH_PATTERNS } from './auth/auth.patterns.js';
import { BACKUP_PATTERNS } from './backups/backups.patterns.js';
import type { RpcDef } from './catalogue.js';
import type { AppName, ServiceName } from './context.js';
import { SERVICE_NAMES } from './context.js';
import { DATABASE_PATTERNS } from './databases/databases.patterns.js';
import { DRILL_PATTERNS } from './drills/drills.patterns.js';
import { PITR_PATTERNS } from './pitr/pitr.patterns.js';
import { PROJECT_PATTERNS } from './projects/projects.patterns.js';
import { RESTORE_PATTERNS } from './restores/restores.patterns.js';
import { WEBHOOK_PATTERNS } from './webhooks/webhooks.patterns.js';

/** Every group of declared patterns, by the name code refers to it with. */
export const PATTERN_GROUPS: Record<string, Record<string, RpcDef<object, unknown>>> = {
  AUTH_PATTERNS,
  PROJECT_PATTERNS,
  DATABASE_PATTERNS,
  RESTORE_PATTERNS,
  DRILL_PATTERNS,
  BACKUP_PATTERNS,
  PITR_PATTERNS,
  WEBHOOK_PATTERNS,
};

/** Every declared pattern. */
export const ALL_PATTERNS: RpcDef<object, unknown>[] = Object.values(PATTERN_GROUPS).flatMap(
  (group) => Object.values(group),
);

/**
 * Who calls whom over RPC: the edges of docs/architecture.md#calls-and-events. Each app's
 * RpcClient is built with its row, so a call to any other service fails at once, and a
 * spec checks the apps' code and that page against it.
 */
export const SERVICE_CALLS: Record<AppName, readonly ServiceName[]> = {
  'api-gateway': SERVICE_NAMES,
  'auth-service': [],
  'project-service': [],
  'database-provisioner': ['projects', 'backups', 'pitr', 'auth'],
  'backup-service': ['databases', 'auth', 'pitr'],
  'pitr-worker': ['databases', 'backups'],
  'notification-service': ['projects'],
};
