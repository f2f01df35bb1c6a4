import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { DrillOutcome, DrillSpec } from '../database-driver.js';
import type { LoadedCa } from './deployment-ca.js';
import { issueCertificate } from './deployment-ca.js';
import type { KubeObjects, ObjectRef } from './kube-objects.js';
import {
  DRILL_CONTAINER,
  DRILL_OF_LABEL,
  buildDrillJob,
  buildDrillSecret,
  drillName,
  parseDrillOutcome,
} from './restore-objects.js';
import type { ServerNames } from './server-names.js';
import type { ServerObjects } from './server-objects.js';
import { waitUntil } from './wait-until.js';

/** What the drills need of the driver. */
export interface DrillContext {
  objects: KubeObjects;
  servers: ServerObjects;
  /** pgcloud's image, which the drill's Job runs. */
  jobImage: string;
  /** How long a drill may take: download, replay and the checks. */
  buildTimeoutMs: number;
  ca(): Promise<LoadedCa>;
}

/**
 * Restore drills on Kubernetes: a Job of the restore program (`drill`) in the database's
 * namespace builds the restore as a restore's Job does, in an emptyDir, checks it and
 * leaves its checks as its termination message; the Job and its Secret then go. Nothing
 * but the Job's own check reaches its server (no Service; a login only it knows).
 */
export class ClusterDrills {
  constructor(private readonly context: DrillContext) {}

  async drill(spec: DrillSpec): Promise<DrillOutcome> {
    const { objects } = this.context;
    const names = await this.namesOf(spec.serverId);
    if (!names) throw new Error(`server ${spec.serverId} does not exist`);
    await this.discard(names);
    try {
      spec.progress?.step('download');
      const loaded = await this.context.ca();
      const certificate = await issueCertificate(loaded, 'localhost', ['localhost', '127.0.0.1']);
      const { signal: _signal, progress: _progress, serverId: _serverId, ...input } = spec;
      await objects.createOrGet(
        buildDrillSecret(names, input, { ...certificate, caPem: loaded.ca.pem }),
      );
      await objects.createOrGet(buildDrillJob(names, this.context.jobImage, spec.drillId));
      const outcome = await waitUntil(() => this.outcome(names), {
        ...this.context.servers.waiting(spec.signal),
        timeoutMs: this.context.buildTimeoutMs,
        what: `the restore drill of ${names.base}`,
      });
      if ('error' in outcome) throw new Error(`the drill's Job failed: ${outcome.error}`);
      return outcome;
    } finally {
      await this.discard(names);
    }
  }

  async discard(names: ServerNames | undefined): Promise<void> {
    if (!names) return;
    const { objects, servers } = this.context;
    const job = drillRef(names, 'batch/v1', 'Job');
    await objects.delete(job, 'Foreground');
    await waitUntil(async () => ((await objects.get(job)) ? undefined : true), {
      ...servers.waiting(),
      what: `the drill Job of ${names.base} gone`,
    });
    await objects.delete(drillRef(names, 'v1', 'Secret'));
  }

  namesOf(serverId: string): Promise<ServerNames | undefined> {
    return this.context.servers.namesOf(serverId);
  }

  /** The drill container's outcome, once it has ended. */
  private async outcome(names: ServerNames): Promise<DrillOutcome | { error: string } | undefined> {
    const job = await this.context.objects.get<V1Job>(drillRef(names, 'batch/v1', 'Job'));
    if (!job) throw new Error('the drill Job is gone');
    const pods = await this.context.objects.list<V1Pod>('v1', 'Pod', names.namespace, {
      [DRILL_OF_LABEL]: names.base,
    });
    for (const pod of pods) {
      const status = pod.status?.containerStatuses?.find((s) => s.name === DRILL_CONTAINER);
      const ended = status?.state?.terminated;
      if (ended) return parseDrillOutcome(ended.message);
    }
    if ((job.status?.failed ?? 0) > 0) return { error: 'the drill Job failed' };
    return undefined;
  }
}

function drillRef(names: ServerNames, apiVersion: string, kind: string): ObjectRef {
  return { apiVersion, kind, namespace: names.namespace, name: drillName(names) };
}
