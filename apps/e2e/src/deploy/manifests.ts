import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateObject } from '@pgcloud/kubernetes/validate';
import { parseAllDocuments } from 'yaml';

/** The repository's root, from apps/e2e/dist/deploy/. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** deploy/kubernetes/, where the base, the overlays and the broker definitions live. */
export const KUBERNETES_DIR = join(ROOT, 'deploy', 'kubernetes');

/** A Kubernetes object as rendered: its type, its name and whatever else it holds. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** `kubectl kustomize DIR`, parsed: every object of the overlay. */
export function render(dir: string): Manifest[] {
  let text: string;
  try {
    text = execFileSync('kubectl', ['kustomize', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const error = err as NodeJS.ErrnoException & { stderr?: string };
    if (error.code === 'ENOENT') {
      throw new Error(
        'kubectl is not on PATH: these tests render the overlays with `kubectl kustomize`. ' +
          'Install kubectl (1.27 or newer) and run them again.',
      );
    }
    throw new Error(`kubectl kustomize ${dir} failed: ${error.stderr ?? error.message}`);
  }
  return parseManifests(text, dir);
}

/** Every document of a YAML (or JSON) stream, refusing a stream with syntax errors. */
export function parseManifests(text: string, source: string): Manifest[] {
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length > 0)
      throw new Error(`${source}: ${document.errors.map((e) => e.message).join('; ')}`);
    return document.toJS() as Manifest;
  });
}

/** `Kind/name`, for messages. */
export function label(object: Manifest): string {
  return `${object.kind}/${object.metadata?.name}`;
}

/**
 * What is wrong with an object against its kind's schema (@pgcloud/kubernetes/validate:
 * types, enums, required fields, and every field the schema does not define); a kind it
 * does not know is refused.
 */
export function schemaProblems(object: Manifest): string[] {
  return validateObject(object);
}

/** A container as these checks read it. */
export interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command?: string[] } } };
  resources?: {
    requests?: Record<string, string>;
    limits?: Record<string, string>;
  };
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface Probe {
  httpGet?: { path?: string; port?: string | number };
  exec?: { command?: string[] };
  tcpSocket?: { port?: string | number };
}

export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}

/** A pod template as these checks read it. */
export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext & { fsGroup?: number };
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  volumes?: {
    name: string;
    emptyDir?: object;
    secret?: { secretName: string; defaultMode?: number };
  }[];
}

/** A Deployment or StatefulSet as these checks read it. */
export interface Workload extends Manifest {
  spec: {
    replicas?: number;
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
}

/** The Deployments and StatefulSets of a rendering. */
export function workloads(objects: Manifest[]): Workload[] {
  return objects.filter(
    (object): object is Workload => object.kind === 'Deployment' || object.kind === 'StatefulSet',
  );
}

/** The pgcloud apps' workloads (label pgcloud.io/role=app), by app name. */
export function appWorkloads(objects: Manifest[]): Map<string, Workload> {
  return new Map(
    workloads(objects)
      .filter((workload) => workload.metadata.labels?.['pgcloud.io/role'] === 'app')
      .map((workload) => [workload.metadata.name, workload]),
  );
}

/** The settings every app reads: the ConfigMap pgcloud-settings (its name has a hash). */
export function settings(objects: Manifest[]): Record<string, string> {
  const maps = objects.filter(
    (object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('pgcloud-settings'),
  );
  if (maps.length !== 1) throw new Error(`expected one pgcloud-settings, found ${maps.length}`);
  return (maps[0] as Manifest & { data: Record<string, string> }).data;
}

/** The names of the Secrets an overlay's objects refer to (env, volumes, Ingress TLS). */
export function referencedSecrets(objects: Manifest[]): Set<string> {
  const names = new Set<string>();
  const walk = (value: unknown, key?: string): void => {
    if (value === null || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    if (key === 'secretRef' || key === 'secretKeyRef') names.add(String(record['name']));
    if (typeof record['secretName'] === 'string') names.add(record['secretName']);
    for (const [childKey, child] of Object.entries(record)) walk(child, childKey);
  };
  objects.forEach((object) => walk(object));
  return names;
}
