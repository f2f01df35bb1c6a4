import {
  CLUSTER_KIND,
  CNPG_API_VERSION,
  HIBERNATION_ANNOTATION,
  SERVER_ID_LABEL,
} from '@pgcloud/kubernetes';
import type { ClusterObject } from './cluster-object.js';
import { QUARANTINED_AT_LABEL } from './server-names.js';
import type { ServerObjects } from './server-objects.js';
import { clusterRef, serviceRef } from './server-objects.js';
import { waitUntil } from './wait-until.js';

/**
 * Deletes a server's objects: the Clusters first, until their pods have ended (no server
 * outlives its record), then a restore's Job and Service, the Secrets, and the Service
 * last, since it is how the driver finds a server's other objects again.
 */
export async function destroyServer(servers: ServerObjects, serverId: string): Promise<void> {
  const { objects } = servers;
  const names = await servers.namesOf(serverId);
  if (!names) return;
  const clusters = await servers.labelled<ClusterObject>(names, CNPG_API_VERSION, CLUSTER_KIND);
  for (const cluster of clusters)
    await objects.delete(clusterRef(names, cluster.metadata?.name ?? ''), 'Foreground');
  await waitUntil(
    async () =>
      (await servers.labelled(names, CNPG_API_VERSION, CLUSTER_KIND)).length === 0
        ? true
        : undefined,
    { ...servers.waiting(), what: `the Clusters of ${names.base} gone` },
  );
  await servers.deleteLabelled(names, 'batch/v1', 'Job', 'Foreground');
  await servers.deleteRestoreService(names);
  await servers.deleteLabelled(names, 'v1', 'Secret');
  await objects.delete(serviceRef(names));
  servers.forget(serverId);
}

/**
 * Sets a server aside: its Clusters hibernated (CNPG keeps the volume, stops the pods)
 * and labelled with when, as is its Service; stopped when this answers, as the local
 * driver's: nothing writes to it any more.
 */
export async function quarantineServer(servers: ServerObjects, serverId: string): Promise<string> {
  const { objects } = servers;
  const names = await servers.namesOf(serverId);
  if (!names) return `nothing of ${serverId}`;
  const at = String(Math.floor(Date.now() / 1000));
  const clusters = (
    await servers.labelled<ClusterObject>(names, CNPG_API_VERSION, CLUSTER_KIND)
  ).map((cluster) => cluster.metadata?.name ?? '');
  for (const cluster of clusters)
    await objects.mergePatch(clusterRef(names, cluster), {
      metadata: {
        labels: { [QUARANTINED_AT_LABEL]: at },
        annotations: { [HIBERNATION_ANNOTATION]: 'on' },
      },
    });
  await objects.mergePatch(serviceRef(names), {
    metadata: { labels: { [QUARANTINED_AT_LABEL]: at } },
  });
  await servers.waitForStopped(names, clusters);
  return `${names.namespace}/${names.base} (hibernated)`;
}

/** The servers set aside before `before`, by their Services' labels. */
export async function quarantinedBefore(servers: ServerObjects, before: Date): Promise<string[]> {
  const found: string[] = [];
  for (const service of await servers.services()) {
    const labels = service.metadata?.labels ?? {};
    const at = Number(labels[QUARANTINED_AT_LABEL]);
    const serverId = labels[SERVER_ID_LABEL];
    if (serverId && Number.isFinite(at) && at * 1000 < before.getTime()) found.push(serverId);
  }
  return found;
}
