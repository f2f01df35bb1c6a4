/**
 * The fields of batch/v1 Jobs and v1 Pods that the kubelet and Job controller stand-ins
 * read: structural subsets of the real types, so that @kubernetes/client-node's V1Job and
 * V1Pod fit them.
 */

/** One entry of a container's `env`. */
export interface StandInEnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}

/** One container (or init container) of a pod template. */
export interface StandInContainer {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: StandInEnvVar[];
  envFrom?: { secretRef?: { name: string; optional?: boolean }; prefix?: string }[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  readinessProbe?: { tcpSocket?: { port: number | string }; periodSeconds?: number };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  terminationMessagePath?: string;
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
}

/** One entry of a pod's `volumes`: the two sources the stand-in makes. */
export interface StandInVolume {
  name: string;
  emptyDir?: Record<string, unknown>;
  secret?: {
    secretName?: string;
    defaultMode?: number;
    items?: { key: string; path: string; mode?: number }[];
  };
}

/** What the stand-in reads of a pod spec. */
export interface StandInPodSpec {
  restartPolicy?: string;
  volumes?: StandInVolume[];
  initContainers?: StandInContainer[];
  containers: StandInContainer[];
}

/** What the stand-in reads of a Job. */
export interface StandInJob {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
  spec: {
    backoffLimit?: number;
    template: { metadata?: { labels?: Record<string, string> }; spec: StandInPodSpec };
  };
  status?: Record<string, unknown>;
}

/** Kubernetes' default terminationMessagePath. */
export const DEFAULT_TERMINATION_PATH = '/dev/termination-log';
