import { POSTGRES_CONTAINER_PORT, SERVICE_PORT_NAME } from '@pgcloud/kubernetes';
import type { CopiedPoint, DrillOutcome, RestoreSpec } from '../database-driver.js';
import type { DrillCheck } from '@pgcloud/contracts';
import type { DrillInput } from '../../restore-job/restore-input.js';
import { REPLICATION_ROLE } from '../database-driver.js';
import type { ServerNames } from './server-names.js';

/** On a restore's Job, its pod, Service and Secret: the server (`srv-...`) it restores. */
export const RESTORE_OF_LABEL = 'pgcloud.dev/restore-of';

/** On a Cluster made by a restore: the restore's id, so a retry knows its own. */
export const RESTORE_ID_ANNOTATION = 'pgcloud.dev/restore-id';

/** The externalClusters entry a restored Cluster is copied from: the Job's server. */
export const RESTORED_SOURCE = 'restored';

/** The restore program in pgcloud's image (apps/database-provisioner/src/restore-job). */
const RESTORE_PROGRAM = ['node', 'apps/database-provisioner/dist/restore-job/main.js'];
const TERMINATION_LOG = '/dev/termination-log';
const DATA_MOUNT = '/restore';
const INPUT_MOUNT = '/etc/pgcloud-restore';
/** The user pgcloud's image runs as (deploy/Dockerfile). */
const IMAGE_USER = 10001;

/** The init container whose termination message is the build's outcome. */
export const BUILD_CONTAINER = 'build';

/** One name for a restore's Job, Service and Secret: one restore per server at a time. */
export function restoreName(names: ServerNames): string {
  return `${names.base}-restore`;
}

/** The names the Job's server answers to inside the cluster (and in its own pod). */
export function restoreHostNames(names: ServerNames): string[] {
  const name = restoreName(names);
  return [name, `${name}.${names.namespace}`, `${name}.${names.namespace}.svc`, 'localhost'];
}

function restoreLabels(names: ServerNames): Record<string, string> {
  return { ...names.labels, [RESTORE_OF_LABEL]: names.base };
}

function metadata(names: ServerNames): Record<string, unknown> {
  return { name: restoreName(names), namespace: names.namespace, labels: restoreLabels(names) };
}

/**
 * What the Job reads (mounted as files, never in its environment or command line): the
 * restore (pre-signed links and passwords: secret), the certificate its server serves, the
 * CA, and the replication password the restored Cluster copies the data with.
 */
export function buildRestoreSecret(
  names: ServerNames,
  spec: RestoreSpec,
  tls: { certPem: string; keyPem: string; caPem: string },
): Record<string, unknown> {
  const input = {
    restoreId: spec.restoreId,
    archive: spec.archive,
    ...(spec.recovery ? { recovery: spec.recovery } : {}),
    archivedDatabaseName: spec.archivedDatabaseName,
    databaseName: spec.databaseName,
    password: spec.password,
    replicationPassword: spec.replicationPassword,
  };
  const data = {
    'restore.json': JSON.stringify(input),
    'tls.crt': tls.certPem,
    'tls.key': tls.keyPem,
    'ca.crt': tls.caPem,
    'replication-password': spec.replicationPassword,
  };
  return secretObject(metadata(names), data);
}

/** Inside the cluster only: how the restored Cluster reaches the Job's server. */
export function buildRestoreService(names: ServerNames): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(names),
    spec: {
      type: 'ClusterIP',
      selector: { [RESTORE_OF_LABEL]: names.base },
      ports: [
        {
          name: SERVICE_PORT_NAME,
          port: POSTGRES_CONTAINER_PORT,
          targetPort: POSTGRES_CONTAINER_PORT,
          protocol: 'TCP',
        },
      ],
    },
  };
}

/**
 * The Job that builds the restored data beside the live Cluster: its init container
 * downloads and checks the archive, replays the WAL to the target, promotes and checks a
 * TLS login, and leaves its outcome as its termination message; its container then serves
 * the data to the restored Cluster's pg_basebackup. Never retried by Kubernetes: the
 * restore job decides.
 */
export function buildRestoreJob(names: ServerNames, image: string): Record<string, unknown> {
  return programJob(metadata(names), restoreLabels(names), {
    initContainers: [
      {
        ...programContainer(BUILD_CONTAINER, image, 'build'),
        env: [...PROGRAM_ENV, { name: 'RESTORE_OUTCOME_PATH', value: TERMINATION_LOG }],
        terminationMessagePath: TERMINATION_LOG,
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
    ],
    containers: [
      {
        ...programContainer('serve', image, 'serve'),
        env: [...PROGRAM_ENV, { name: 'RESTORE_PORT', value: String(POSTGRES_CONTAINER_PORT) }],
        ports: [{ name: SERVICE_PORT_NAME, containerPort: POSTGRES_CONTAINER_PORT }],
        readinessProbe: { tcpSocket: { port: POSTGRES_CONTAINER_PORT }, periodSeconds: 2 },
      },
    ],
  });
}

/** On a drill's Job, its pod and Secret: the server (`srv-...`) whose backup it restores. */
export const DRILL_OF_LABEL = 'pgcloud.dev/drill-of';

/** On a drill's Job: the drill's id, so a retry knows its own. */
export const DRILL_ID_ANNOTATION = 'pgcloud.dev/drill-id';

/** The container whose termination message is the drill's outcome. */
export const DRILL_CONTAINER = 'drill';

/** One name for a drill's Job and Secret: one drill per database at a time. */
export function drillName(names: ServerNames): string {
  return `${names.base}-drill`;
}

function drillMetadata(names: ServerNames, drillId: string): Record<string, unknown> {
  return {
    name: drillName(names),
    namespace: names.namespace,
    labels: { ...names.labels, [DRILL_OF_LABEL]: names.base },
    annotations: { [DRILL_ID_ANNOTATION]: drillId },
  };
}

/**
 * What a drill's Job reads: the drill (pre-signed links: secret), the certificate its
 * scratch server serves the loopback check with, and the CA.
 */
export function buildDrillSecret(
  names: ServerNames,
  input: DrillInput,
  tls: { certPem: string; keyPem: string; caPem: string },
): Record<string, unknown> {
  return secretObject(drillMetadata(names, input.drillId), {
    'restore.json': JSON.stringify(input),
    'tls.crt': tls.certPem,
    'tls.key': tls.keyPem,
    'ca.crt': tls.caPem,
  });
}

/**
 * A restore drill's Job: the restore's build in a scratch directory (an emptyDir, gone
 * with the pod), its checks while the scratch server runs, and the outcome as the
 * container's termination message. No Service: nothing reaches its server.
 */
export function buildDrillJob(
  names: ServerNames,
  image: string,
  drillId: string,
): Record<string, unknown> {
  const labels = { ...names.labels, [DRILL_OF_LABEL]: names.base };
  return programJob(drillMetadata(names, drillId), labels, {
    containers: [
      {
        ...programContainer(DRILL_CONTAINER, image, 'drill'),
        env: [...PROGRAM_ENV, { name: 'RESTORE_OUTCOME_PATH', value: TERMINATION_LOG }],
        terminationMessagePath: TERMINATION_LOG,
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
    ],
  });
}

const PROGRAM_ENV = [
  { name: 'RESTORE_DIR', value: DATA_MOUNT },
  { name: 'RESTORE_INPUT_DIR', value: INPUT_MOUNT },
];

/** A container of the restore program, as the restricted Pod Security Standard wants it. */
function programContainer(name: string, image: string, command: string) {
  return {
    name,
    image,
    command: [...RESTORE_PROGRAM, command],
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [
      { name: 'data', mountPath: DATA_MOUNT },
      { name: 'input', mountPath: INPUT_MOUNT, readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
    ],
  };
}

/** A Job of the restore program: its data and /tmp in emptyDirs, its input from the Secret. */
function programJob(
  meta: Record<string, unknown>,
  podLabels: Record<string, string>,
  containers: { initContainers?: unknown[]; containers: unknown[] },
): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: meta,
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: podLabels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: IMAGE_USER,
            runAsGroup: IMAGE_USER,
            fsGroup: IMAGE_USER,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
            { name: 'input', secret: { secretName: meta['name'], defaultMode: 0o440 } },
          ],
          ...containers,
        },
      },
    },
  };
}

function secretObject(
  meta: Record<string, unknown>,
  data: Record<string, string>,
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta,
    type: 'Opaque',
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
  };
}

/** The externalClusters entry of the Job's server, as the restored Cluster copies it. */
export function restoredSource(names: ServerNames): Record<string, unknown> & { name: string } {
  return {
    name: RESTORED_SOURCE,
    connectionParameters: {
      host: `${restoreName(names)}.${names.namespace}.svc`,
      port: String(POSTGRES_CONTAINER_PORT),
      user: REPLICATION_ROLE,
      dbname: 'postgres',
      sslmode: 'verify-full',
    },
    password: { name: restoreName(names), key: 'replication-password' },
    sslRootCert: { name: restoreName(names), key: 'ca.crt' },
  };
}

/** What the build container's termination message says. */
export type BuildOutcome =
  | {
      walFilesApplied: number;
      stepSeconds: { download: number; recover: number; check: number };
      copiedPoint?: CopiedPoint;
    }
  | { error: string; corrupt: boolean };

/** Reads the build's termination message; anything else is said as it is. */
export function parseBuildOutcome(message: string | undefined): BuildOutcome {
  try {
    const parsed = JSON.parse(message ?? '') as Partial<Record<string, unknown>>;
    if (typeof parsed.error === 'string')
      return { error: parsed.error, corrupt: parsed.corrupt === true };
    const steps = parsed.stepSeconds as Record<string, unknown> | undefined;
    if (typeof parsed.walFilesApplied === 'number' && steps)
      return {
        walFilesApplied: parsed.walFilesApplied,
        stepSeconds: {
          download: Number(steps.download ?? 0),
          recover: Number(steps.recover ?? 0),
          check: Number(steps.check ?? 0),
        },
        ...copiedPointIn(parsed.copiedPoint),
      };
  } catch {
    // Not JSON: the end of the log (FallbackToLogsOnError), said as the error.
  }
  return {
    error: (message ?? '').trim() || 'the restore build ended without a word',
    corrupt: false,
  };
}

/** A copied point as the build's message carries it, when it is one. */
function copiedPointIn(value: unknown): { copiedPoint?: CopiedPoint } {
  const point = value as Partial<CopiedPoint> | undefined;
  if (typeof point?.lsn !== 'string') return {};
  return { copiedPoint: { lsn: point.lsn, at: typeof point.at === 'string' ? point.at : null } };
}

/** What a drill container's termination message says (restore-job/outcome-line.ts). */
export function parseDrillOutcome(message: string | undefined): DrillOutcome | { error: string } {
  try {
    const parsed = JSON.parse(message ?? '') as Partial<Record<string, unknown>>;
    if (typeof parsed.error === 'string') return { error: parsed.error };
    if (Array.isArray(parsed.checks))
      return {
        checks: (parsed.checks as DrillCheck[]).filter(
          (c) => typeof c.name === 'string' && typeof c.passed === 'boolean',
        ),
        restoreSeconds: Number(parsed.restoreSeconds ?? 0),
        walFilesApplied: Number(parsed.walFilesApplied ?? 0),
        ...(typeof parsed.replayEnd === 'string' ? { replayEnd: parsed.replayEnd } : {}),
        ...(typeof parsed.cause === 'string' ? { cause: parsed.cause } : {}),
      };
  } catch {
    // Not JSON: the end of the log (FallbackToLogsOnError), said as the error.
  }
  return { error: (message ?? '').trim() || 'the drill ended without a word' };
}
