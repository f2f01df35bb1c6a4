import type { ServiceName } from './context.js';
import { SERVICE_NAMES } from './context.js';

/** The cloud's processes. */
export type AppName =
  | 'api-gateway'
  | 'auth-service'
  | 'project-service'
  | 'database-provisioner'
  | 'backup-service'
  | 'pitr-worker';

/**
 * Who calls whom over RPC: the edges of README's "Calls and events". Each app's RpcClient
 * is built with its row, so a call to any other service fails at once, and a spec checks
 * the apps' code and README against it.
 */
export const SERVICE_CALLS: Record<AppName, readonly ServiceName[]> = {
  'api-gateway': SERVICE_NAMES,
  'auth-service': [],
  'project-service': ['databases'],
  'database-provisioner': ['projects', 'backups', 'pitr'],
  'backup-service': ['databases', 'auth', 'pitr'],
  'pitr-worker': ['databases', 'backups'],
};
