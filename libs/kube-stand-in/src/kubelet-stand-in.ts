import { randomBytes } from 'node:crypto';
import { PollLoop } from './poll-loop.js';
import { join } from 'node:path';
import type { SecretLookup, StandInSecret } from './cnpg-cluster-fields.js';
import type { StandInJob } from './pod-fields.js';
import type { PodPhase } from './pod-processes.js';
import { PodProcesses } from './pod-processes.js';
import type { ServiceEndpointCandidate } from './service-proxy-stand-in.js';
import type { ApiObject } from './stand-in-api.js';
import { StandInApi } from './stand-in-api.js';

/** How the Job runner reaches the API, where its pods' files go and what they run in. */
export interface KubeletStandInOptions {
  /** The API's base URL and bearer token (ApiServerStandIn's url and token). */
  apiUrl: string;
  token: string;
  /** Each pod's files (volumes, logs) go under `<podRoot>/<namespace>/<pod>`. */
  podRoot: string;
  /** The directory standing in for the image's working directory (and filesystem). */
  imageRoot: string;
  /** The image's environment, which every process starts from (PATH, PG_BIN_DIR...). */
  imageEnv: Record<string, string>;
  /** How often it looks at the API (default 100 ms). */
  pollMs?: number;
}

/** A pod the runner runs, as a Service endpoint candidate of its namespace. */
export interface JobPodEndpoint extends ServiceEndpointCandidate {
  namespace: string;
}

interface JobRecord {
  podName: string;
  startTime: string;
  phase: PodPhase;
  ready: boolean;
  /** Its pod went before it finished: the Job failed. */
  lost?: boolean;
  /** The status last written, to write only changes. */
  said?: string;
}

interface RunningPod {
  namespace: string;
  labels: Record<string, string>;
  jobUid: string;
  processes: PodProcesses;
  said?: string;
  stopping?: Promise<void>;
  stopped?: boolean;
  /** It has been in a list: missing from a later one, it was deleted (not yet listed). */
  listed?: boolean;
}

const JOBS = '/apis/batch/v1';
/** Held on every Job it runs, so that the Job stays until its pods are gone. */
const JOB_FINALIZER = 'stand-in.pgcloud.dev/pods';
/** Held on every pod it runs, so that a deleted pod stays until its processes have ended. */
const POD_FINALIZER = 'stand-in.pgcloud.dev/processes';

/**
 * A STAND-IN for the Job controller and the kubelet, for tests only: each batch/v1 Job
 * gets ONE Pod (`<job>-<random>`, the template's labels plus `batch.kubernetes.io/job-name`
 * and `job-name`, owned by the Job) whose containers run as local processes
 * (PodProcesses); the Pod's and the Job's status follow them. A deleted Pod has its
 * processes stopped and its files removed before it goes; a deleted Job deletes its Pod
 * and stays until it is gone. It polls rather than watches.
 * What real Kubernetes does differently: it schedules pods on nodes; the Job controller
 * makes a new pod for a failed or lost one until `backoffLimit` is spent (here one pod,
 * never retried: a failure or a lost pod fails the Job, as backoffLimit 0 does), runs
 * `parallelism`/`completions` pods, honours activeDeadlineSeconds, suspend and
 * ttlSecondsAfterFinished; a Job deleted in the background goes at once while its pods
 * end (here it stays until they are gone, whatever the propagation).
 */
export class KubeletStandIn {
  private readonly api: StandInApi;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly pods = new Map<string, RunningPod>();
  private loop?: PollLoop;

  private constructor(private readonly options: KubeletStandInOptions) {
    this.api = new StandInApi(options.apiUrl, options.token);
  }

  static start(options: KubeletStandInOptions): KubeletStandIn {
    const runner = new KubeletStandIn(options);
    runner.loop = new PollLoop('Job runner stand-in', () => runner.reconcile(), options.pollMs);
    return runner;
  }

  /** The pods it runs, for the Services whose selectors match them. */
  endpoints(): JobPodEndpoint[] {
    return [...this.pods.values()]
      .filter((pod) => !pod.stopping)
      .map((pod) => ({
        namespace: pod.namespace,
        labels: pod.labels,
        phase: pod.processes.phase,
        ready: this.jobs.get(pod.jobUid)?.ready ?? false,
        port: 0,
        ports: pod.processes.ports,
      }));
  }

  /** Stops looking, and every pod's processes (their files go). */
  async stop(): Promise<void> {
    await this.loop?.stop();
    await Promise.all([...this.pods.values()].map((pod) => pod.stopping ?? pod.processes.stop()));
    this.pods.clear();
  }

  private async reconcile(): Promise<void> {
    const jobs = (await this.api.list(`${JOBS}/jobs`)) as unknown as (StandInJob & ApiObject)[];
    const pods = await this.api.list('/api/v1/pods');
    for (const job of jobs) await this.reconcileJob(job, pods);
    await this.reconcilePods(pods);
    for (const job of jobs) if (!job.metadata.deletionTimestamp) await this.writeJobStatus(job);
  }

  private async reconcileJob(job: StandInJob & ApiObject, pods: ApiObject[]): Promise<void> {
    const uid = job.metadata.uid ?? '';
    const finalizers = job.metadata.finalizers ?? [];
    if (job.metadata.deletionTimestamp) {
      const owned = pods.filter((pod) =>
        pod.metadata.ownerReferences?.some((owner) => owner.uid === uid),
      );
      for (const pod of owned)
        if (!pod.metadata.deletionTimestamp)
          await this.api.request('DELETE', podPath(pod), undefined, [404]);
      if (owned.length === 0 && finalizers.includes(JOB_FINALIZER)) {
        const rest = finalizers.filter((name) => name !== JOB_FINALIZER);
        await this.api.request('PATCH', jobPath(job), { metadata: { finalizers: rest } }, [404]);
        this.jobs.delete(uid);
      }
      return;
    }
    if (!finalizers.includes(JOB_FINALIZER))
      await this.api.request('PATCH', jobPath(job), {
        metadata: { finalizers: [...finalizers, JOB_FINALIZER] },
      });
    if (!this.jobs.has(uid) && !finished(job)) await this.startPod(job);
  }

  private async startPod(job: StandInJob & ApiObject): Promise<void> {
    const namespace = job.metadata.namespace ?? 'default';
    const name = `${job.metadata.name.slice(0, 57)}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    const labels = {
      ...job.spec.template.metadata?.labels,
      'batch.kubernetes.io/job-name': job.metadata.name,
      'job-name': job.metadata.name,
    };
    const uid = job.metadata.uid ?? '';
    await this.api.request('POST', `/api/v1/namespaces/${namespace}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace,
        labels,
        finalizers: [POD_FINALIZER],
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            name: job.metadata.name,
            uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: job.spec.template.spec,
    });
    const processes = await PodProcesses.start(job.spec.template.spec, {
      podDir: join(this.options.podRoot, namespace, name),
      imageRoot: this.options.imageRoot,
      baseEnv: { ...this.options.imageEnv, HOSTNAME: name },
      secrets: await this.secrets(namespace),
    });
    const startTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    this.jobs.set(uid, { podName: name, startTime, phase: 'Pending', ready: false });
    this.pods.set(`${namespace}/${name}`, { namespace, labels, jobUid: uid, processes });
  }

  /** Writes each running pod's status; stops the deleted ones and lets them go. */
  private async reconcilePods(pods: ApiObject[]): Promise<void> {
    const listed = new Map(pods.map((pod) => [podKey(pod), pod]));
    for (const [key, pod] of this.pods) {
      const stored = listed.get(key);
      const job = this.jobs.get(pod.jobUid);
      if (!stored && !pod.listed) continue;
      pod.listed = true;
      if (!stored || stored.metadata.deletionTimestamp) {
        if (job && (job.phase === 'Pending' || job.phase === 'Running')) job.lost = true;
        pod.stopping ??= this.stopPod(pod);
        continue;
      }
      const status = await pod.processes.status();
      if (job) {
        job.phase = pod.processes.phase;
        job.ready = (status.conditions as { type: string; status: string }[]).some(
          (condition) => condition.type === 'Ready' && condition.status === 'True',
        );
      }
      const said = JSON.stringify(status);
      if (pod.said === said) continue;
      await this.api.request('PATCH', `${podPath(stored)}/status`, { status }, [404]);
      pod.said = said;
    }
    // A deleted pod goes once its processes have ended (theirs, or one left from before).
    for (const stored of pods) {
      const finalizers = stored.metadata.finalizers ?? [];
      if (!stored.metadata.deletionTimestamp || !finalizers.includes(POD_FINALIZER)) continue;
      const pod = this.pods.get(podKey(stored));
      if (pod && !pod.stopped) continue;
      this.pods.delete(podKey(stored));
      const rest = finalizers.filter((name) => name !== POD_FINALIZER);
      await this.api.request('PATCH', podPath(stored), { metadata: { finalizers: rest } }, [404]);
    }
    for (const [key, pod] of this.pods) if (!listed.has(key) && pod.stopped) this.pods.delete(key);
  }

  private async stopPod(pod: RunningPod): Promise<void> {
    try {
      await pod.processes.stop();
    } catch (err) {
      console.error(`Job runner stand-in: ${err instanceof Error ? err.message : String(err)}`);
    }
    pod.stopped = true;
  }

  private async writeJobStatus(job: StandInJob & ApiObject): Promise<void> {
    const record = this.jobs.get(job.metadata.uid ?? '');
    if (!record) return;
    const phase = record.lost ? 'Failed' : record.phase;
    const done = phase === 'Succeeded' || phase === 'Failed';
    const status = {
      startTime: record.startTime,
      ...(done ? {} : { active: 1 }),
      ...(phase === 'Succeeded' ? { succeeded: 1 } : {}),
      ...(phase === 'Failed' ? { failed: 1 } : {}),
      ready: record.ready && !done ? 1 : 0,
      ...(done ? { conditions: [finishedCondition(phase)] } : {}),
    };
    const said = JSON.stringify(status);
    if (record.said === said) return;
    const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const written = {
      ...status,
      ...(phase === 'Succeeded' ? { completionTime: time } : {}),
      ...(done
        ? {
            conditions: [
              { ...finishedCondition(phase), lastProbeTime: time, lastTransitionTime: time },
            ],
          }
        : {}),
    };
    await this.api.request('PATCH', `${jobPath(job)}/status`, { status: written }, [404]);
    record.said = said;
  }

  private async secrets(namespace: string): Promise<SecretLookup> {
    const items = await this.api.list(`/api/v1/namespaces/${namespace}/secrets`);
    const byName = new Map(items.map((item) => [item.metadata.name, item as StandInSecret]));
    return (name) => byName.get(name);
  }
}

function finishedCondition(phase: 'Succeeded' | 'Failed') {
  return phase === 'Succeeded'
    ? { type: 'Complete', status: 'True' }
    : {
        type: 'Failed',
        status: 'True',
        reason: 'BackoffLimitExceeded',
        message: 'Job has reached the specified backoff limit',
      };
}

/** A Job whose status says it has ended (a runner before this one ran it). */
function finished(job: StandInJob): boolean {
  const status = job.status ?? {};
  return Number(status.succeeded ?? 0) > 0 || Number(status.failed ?? 0) > 0;
}

function podKey(pod: ApiObject): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

function podPath(pod: ApiObject): string {
  return `/api/v1/namespaces/${pod.metadata.namespace ?? 'default'}/pods/${pod.metadata.name}`;
}

function jobPath(job: ApiObject): string {
  return `${JOBS}/namespaces/${job.metadata.namespace ?? 'default'}/jobs/${job.metadata.name}`;
}
