import type { DatabaseConfig } from '@pgcloud/contracts';
import { sizeSettings } from '../server-size.js';
import type { ClusterObject } from './cluster-object.js';
import { clusterParameters, clusterResources, clusterStorageSize } from './cluster-object.js';
import { SQL_TIMEOUT_MS } from './cluster-readiness.js';
import type { KubeObjects, ObjectRef } from './kube-objects.js';
import type { Waiting } from './server-objects.js';
import type { SuperuserLogin } from './superuser-session.js';
import { withTlsSuperuser } from './superuser-session.js';
import { waitUntil } from './wait-until.js';

/**
 * A Cluster's new size (docs/api/databases.md#resizing): its resources, its parameters and
 * its volume's request in one patch. CNPG restarts the instance for the parameters that
 * need it (shared_buffers) and expands the volume where the storage class allows it;
 * shrinking a volume is refused before this (the request's STORAGE_IN_USE). Answers once
 * the server runs with the new settings and has none waiting for a restart.
 */
export async function resizeCluster(
  objects: KubeObjects,
  ref: ObjectRef,
  config: DatabaseConfig,
  server: { login: SuperuserLogin; waiting: Waiting & { signal?: AbortSignal } },
): Promise<void> {
  const cluster = await objects.get<ClusterObject>(ref);
  if (!cluster) throw new Error(`Cluster ${ref.namespace}/${ref.name} does not exist`);
  const postgresql = cluster.spec?.postgresql as
    { parameters?: Record<string, string> } | undefined;
  // The storage limit's read-only mode is a parameter too: it stays as it is.
  const readOnly = postgresql?.parameters?.default_transaction_read_only === 'on';
  await objects.mergePatch(ref, {
    spec: {
      postgresql: { parameters: clusterParameters(config, readOnly) },
      resources: clusterResources(config),
      storage: { size: clusterStorageSize(config) },
    },
  });
  const sharedBuffers = String(sizeSettings(config).shared_buffers);
  await waitUntil(
    () =>
      withTlsSuperuser(server.login, SQL_TIMEOUT_MS, async (client) => {
        const { rows } = await client.query<{ applied: boolean }>(
          `SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes($1)
              AND NOT EXISTS (SELECT 1 FROM pg_settings WHERE pending_restart) AS applied`,
          [sharedBuffers],
        );
        return rows[0]?.applied ? true : undefined;
      }),
    { ...server.waiting, what: `Cluster ${ref.name} running with its new size` },
  );
}
