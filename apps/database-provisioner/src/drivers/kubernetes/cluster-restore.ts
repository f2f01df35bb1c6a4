import type { V1Job, V1Pod, V1Service } from '@kubernetes/client-node';
import pg from 'pg';
import {
  CLUSTER_KIND,
  CNPG_API_VERSION,
  CNPG_CLUSTER_LABEL,
  HIBERNATION_ANNOTATION,
} from '@pgcloud/kubernetes';
import type { RestoreOutcome, RestoreSpec, ServerEndpoint } from '../database-driver.js';
import { CorruptArchiveError } from '../database-driver.js';
import type { ClusterObject } from './cluster-object.js';
import { buildRestoredCluster, isHealthy } from './cluster-object.js';
import type { LoadedCa } from './deployment-ca.js';
import { issueCertificate } from './deployment-ca.js';
import type { KubeObjects, ObjectRef } from './kube-objects.js';
import type { BuildOutcome } from './restore-objects.js';
import {
  BUILD_CONTAINER,
  buildRestoreJob,
  buildRestoreSecret,
  buildRestoreService,
  parseBuildOutcome,
  RESTORE_ID_ANNOTATION,
  RESTORE_OF_LABEL,
  restoredSource,
  restoreHostNames,
  restoreName,
} from './restore-objects.js';
import type { ServerNames } from './server-names.js';
import { clusterName, generationOf } from './server-names.js';
import type { ServerObjects } from './server-objects.js';
import { clusterRef, selectedCluster, serviceRef } from './server-objects.js';
import type { SuperuserLogin } from './superuser-session.js';
import { withTlsSuperuser } from './superuser-session.js';
import { SQL_TIMEOUT_MS } from './cluster-readiness.js';
import { waitUntil } from './wait-until.js';

/** On pgcloud's Service while a restore is swapped in: the Cluster it served before. */
const PREVIOUS_CLUSTER_ANNOTATION = 'pgcloud.dev/previous-cluster';

/** The externalClusters entry a held Cluster "follows": nothing answers at its host. */
const HOLD_SOURCE = 'pgcloud-hold';
const HOLD_EXTERNAL_CLUSTER = {
  name: HOLD_SOURCE,
  connectionParameters: { host: 'pgcloud-hold.invalid', dbname: 'postgres' },
};

/** What the restores need of the driver. */
export interface RestoreContext {
  objects: KubeObjects;
  servers: ServerObjects;
  /** pgcloud's image, which the restore Job runs. */
  jobImage: string;
  /** How long a restore's build may take (download, replay, copy). */
  buildTimeoutMs: number;
  ca(): Promise<LoadedCa>;
  superuserLogin(names: ServerNames, service: V1Service): Promise<SuperuserLogin>;
  ensureRunning(serverId: string): Promise<ServerEndpoint>;
}

/**
 * Restores on Kubernetes. The live Cluster is held as a standby (CNPG demotes it: reads go
 * on, no write can be made, whatever the client sends). A Job from pgcloud's image builds
 * the restored data beside it and serves it; the next generation's Cluster is copied from
 * the Job's server with pg_basebackup and stays a standby. The swap points pgcloud's Service
 * at it (the old Cluster hibernated, kept); the finish promotes it and deletes the old one,
 * the Job and its Service and Secret. Until then, abandoning brings the old Cluster back.
 */
export class ClusterRestores {
  constructor(private readonly context: RestoreContext) {}

  async hold(serverId: string): Promise<void> {
    await this.context.ensureRunning(serverId);
    const { names, service } = await this.locate(serverId);
    const current = selectedCluster(service);
    const cluster = await this.cluster(names, current);
    if (cluster?.spec?.replica?.enabled !== true)
      await this.context.objects.mergePatch(clusterRef(names, current), {
        spec: {
          replica: { enabled: true, source: HOLD_SOURCE },
          externalClusters: [HOLD_EXTERNAL_CLUSTER],
        },
      });
    await this.waitInRecovery(names, service, true);
  }

  async build(spec: RestoreSpec): Promise<RestoreOutcome> {
    const { objects } = this.context;
    const { names, service } = await this.locate(spec.serverId);
    const current = selectedCluster(service);
    spec.progress?.step('download');
    // Afresh: what an earlier attempt left goes first.
    await this.discardBuild(names, current);
    const loaded = await this.context.ca();
    const certificate = await issueCertificate(loaded, restoreName(names), restoreHostNames(names));
    await objects.createOrGet(
      buildRestoreSecret(names, spec, { ...certificate, caPem: loaded.ca.pem }),
    );
    await objects.createOrGet(buildRestoreService(names));
    await objects.createOrGet(buildRestoreJob(names, this.context.jobImage));
    const waiting = { ...this.context.servers.waiting(spec.signal) };
    const outcome = await waitUntil(() => this.buildOutcome(names), {
      ...waiting,
      timeoutMs: this.context.buildTimeoutMs,
      what: `the restore build of ${names.base}`,
    });
    if ('error' in outcome) {
      const message = `the restore build failed: ${outcome.error}`;
      throw outcome.corrupt ? new CorruptArchiveError(message) : new Error(message);
    }
    // The copy: the next generation, from the Job's server, a standby until the finish.
    spec.progress?.step('check');
    const copyAt = performance.now();
    const next = clusterName(names, (generationOf(names, current) ?? 1) + 1);
    const live = await this.cluster(names, current);
    if (!live) throw new Error(`server ${spec.serverId} has no Cluster ${current}`);
    await objects.createOrGet(
      buildRestoredCluster(live, {
        names,
        clusterName: next,
        restoreId: spec.restoreId,
        source: restoredSource(names),
      }),
    );
    await waitUntil(
      async () => {
        const found = await this.cluster(names, next);
        if (!found) throw new Error('it is gone');
        return isHealthy(found) ? true : undefined;
      },
      {
        ...waiting,
        timeoutMs: this.context.buildTimeoutMs,
        what: `Cluster ${names.namespace}/${next} copied`,
      },
    );
    const seconds = (performance.now() - copyAt) / 1000;
    return {
      walFilesApplied: outcome.walFilesApplied,
      stepSeconds: { ...outcome.stepSeconds, check: outcome.stepSeconds.check + seconds },
      ...(outcome.copiedPoint ? { copiedPoint: outcome.copiedPoint } : {}),
    };
  }

  async swapIn(serverId: string, restoreId: string): Promise<ServerEndpoint> {
    const { objects, servers } = this.context;
    const { names, service } = await this.locate(serverId);
    const current = selectedCluster(service);
    if ((await this.restoreIdOf(names, current)) !== restoreId) {
      const restored = await this.restoredCluster(names, restoreId);
      if (!restored) throw new Error(`restore ${restoreId} has no Cluster to swap in`);
      await objects.mergePatch(serviceRef(names), {
        metadata: { annotations: { [PREVIOUS_CLUSTER_ANNOTATION]: current } },
        spec: { selector: { ...service.spec?.selector, [CNPG_CLUSTER_LABEL]: restored } },
      });
      // The old Cluster's sessions end, as the local driver's stopped server ends them.
      await objects.mergePatch(clusterRef(names, current), {
        metadata: { annotations: { [HIBERNATION_ANNOTATION]: 'on' } },
      });
    }
    const swapped = await servers.service(names);
    if (!swapped) throw new Error(`server ${serverId} does not exist`);
    await this.waitForSwap(names, swapped);
    return servers.endpointOf(names, swapped);
  }

  /**
   * Until the old Cluster's pods have stopped and a server answers through the Service:
   * the restored one, the only one its selector can reach (kube-proxy follows a changed
   * selector a moment later). Any answer counts, a refused login too: the restored data
   * may carry another superuser password until it is promoted.
   */
  private async waitForSwap(names: ServerNames, service: V1Service): Promise<void> {
    const previous = service.metadata?.annotations?.[PREVIOUS_CLUSTER_ANNOTATION];
    if (previous) await this.context.servers.waitForStopped(names, [previous]);
    const login = await this.context.superuserLogin(names, service);
    await waitUntil(
      () =>
        withTlsSuperuser(login, SQL_TIMEOUT_MS, () => Promise.resolve(true)).catch(
          (err: unknown) => {
            if (isServerAnswer(err)) return true;
            throw err;
          },
        ),
      { ...this.context.servers.waiting(), what: `the Service of ${names.base} swapped` },
    );
  }

  async isSwapped(serverId: string, restoreId: string): Promise<boolean> {
    const names = await this.context.servers.namesOf(serverId);
    const service = names && (await this.context.servers.service(names));
    if (!names || !service) return false;
    return (await this.restoreIdOf(names, selectedCluster(service))) === restoreId;
  }

  /** The swapped-in Cluster promoted; the old one, the Job and its objects gone. */
  async finish(serverId: string): Promise<void> {
    const { names, service } = await this.locate(serverId);
    const current = selectedCluster(service);
    await this.release(names, service, current);
    await this.discardBuild(names, current);
    await this.context.objects.mergePatch(serviceRef(names), {
      metadata: { annotations: { [PREVIOUS_CLUSTER_ANNOTATION]: null } },
    });
  }

  /** The old Cluster back behind the Service and writable; the restore's objects gone. */
  async abandon(serverId: string): Promise<void> {
    const { objects, servers } = this.context;
    const { names, service } = await this.locate(serverId);
    let current = selectedCluster(service);
    const previous = service.metadata?.annotations?.[PREVIOUS_CLUSTER_ANNOTATION];
    if (previous && (await this.cluster(names, previous))) {
      await objects.mergePatch(serviceRef(names), {
        metadata: { annotations: { [PREVIOUS_CLUSTER_ANNOTATION]: null } },
        spec: { selector: { ...service.spec?.selector, [CNPG_CLUSTER_LABEL]: previous } },
      });
      await objects.mergePatch(clusterRef(names, previous), {
        metadata: { annotations: { [HIBERNATION_ANNOTATION]: 'off' } },
      });
      current = previous;
    }
    await this.discardBuild(names, current);
    const restored = await servers.service(names);
    if (restored) await this.release(names, restored, current);
  }

  /** Promotes a held Cluster (no-op when it is not) and waits until it takes writes. */
  private async release(names: ServerNames, service: V1Service, cluster: string): Promise<void> {
    const found = await this.cluster(names, cluster);
    const replica = found?.spec?.replica;
    if (replica?.enabled === true)
      await this.context.objects.mergePatch(clusterRef(names, cluster), {
        spec: { replica: { enabled: false, source: replica.source ?? HOLD_SOURCE } },
      });
    await this.waitInRecovery(names, service, false);
  }

  /** The Job, its Service and Secret, and every Cluster but `keep`, gone. */
  private async discardBuild(names: ServerNames, keep: string): Promise<void> {
    const { objects, servers } = this.context;
    const clusters = await servers.labelled<ClusterObject>(names, CNPG_API_VERSION, CLUSTER_KIND);
    const others = clusters.map((c) => c.metadata?.name ?? '').filter((name) => name !== keep);
    for (const name of others) await objects.delete(clusterRef(names, name), 'Foreground');
    const job = restoreRef(names, 'batch/v1', 'Job');
    await objects.delete(job, 'Foreground');
    await waitUntil(
      async () => {
        const left = await servers.labelled(names, CNPG_API_VERSION, CLUSTER_KIND);
        const gone = left.every((c) => c.metadata?.name === keep) && !(await objects.get(job));
        return gone ? true : undefined;
      },
      { ...servers.waiting(), what: `the restore objects of ${names.base} gone` },
    );
    await objects.delete(restoreRef(names, 'v1', 'Service'));
    await objects.delete(restoreRef(names, 'v1', 'Secret'));
  }

  /** The build container's outcome, once it has ended (its pod failed or went on). */
  private async buildOutcome(names: ServerNames): Promise<BuildOutcome | undefined> {
    const job = await this.context.objects.get<V1Job>(restoreRef(names, 'batch/v1', 'Job'));
    if (!job) throw new Error('the restore Job is gone');
    const pods = await this.context.objects.list<V1Pod>('v1', 'Pod', names.namespace, {
      [RESTORE_OF_LABEL]: names.base,
    });
    for (const pod of pods) {
      const build = pod.status?.initContainerStatuses?.find((s) => s.name === BUILD_CONTAINER);
      const ended = build?.state?.terminated;
      if (!ended) continue;
      const outcome = parseBuildOutcome(ended.message);
      if (ended.exitCode !== 0 && !('error' in outcome))
        return { error: `the build exited with ${ended.exitCode}`, corrupt: false };
      if ('error' in outcome) return outcome;
      // Built: the copy may begin once its server takes connections.
      const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      if (ready) return outcome;
      if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded')
        return { error: 'the restored server stopped before it was copied', corrupt: false };
    }
    if ((job.status?.failed ?? 0) > 0) return { error: 'the restore Job failed', corrupt: false };
    return undefined;
  }

  private async waitInRecovery(
    names: ServerNames,
    service: V1Service,
    inRecovery: boolean,
  ): Promise<void> {
    const login = await this.context.superuserLogin(names, service);
    await waitUntil(
      () =>
        withTlsSuperuser(login, SQL_TIMEOUT_MS, async (client) => {
          const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
          return rows[0]?.r === inRecovery ? true : undefined;
        }),
      {
        ...this.context.servers.waiting(),
        what: `${names.base} ${inRecovery ? 'held' : 'taking writes'}`,
      },
    );
  }

  private async locate(serverId: string): Promise<{ names: ServerNames; service: V1Service }> {
    const names = await this.context.servers.namesOf(serverId);
    const service = names && (await this.context.servers.service(names));
    if (!names || !service) throw new Error(`server ${serverId} does not exist`);
    return { names, service };
  }

  private cluster(names: ServerNames, name: string): Promise<ClusterObject | undefined> {
    return this.context.objects.get<ClusterObject>(clusterRef(names, name));
  }

  private async restoreIdOf(names: ServerNames, cluster: string): Promise<string | undefined> {
    return (await this.cluster(names, cluster))?.metadata?.annotations?.[RESTORE_ID_ANNOTATION];
  }

  /** The Cluster this restore made, if it has one. */
  private async restoredCluster(names: ServerNames, restoreId: string) {
    const clusters = await this.context.servers.labelled<ClusterObject>(
      names,
      CNPG_API_VERSION,
      CLUSTER_KIND,
    );
    return clusters.find(
      (cluster) => cluster.metadata?.annotations?.[RESTORE_ID_ANNOTATION] === restoreId,
    )?.metadata?.name;
  }
}

/** An error PostgreSQL itself sent (a SQLSTATE, not a socket's): a server answered. */
function isServerAnswer(err: unknown): boolean {
  return err instanceof pg.DatabaseError;
}

function restoreRef(names: ServerNames, apiVersion: string, kind: string): ObjectRef {
  return { apiVersion, kind, namespace: names.namespace, name: restoreName(names) };
}
