import type { SecretLookup } from './cnpg-cluster-fields.js';
import { secretValue } from './cnpg-cluster-fields.js';
import type { StandInContainer } from './pod-fields.js';

/**
 * Where a container's paths and ports are on this machine: there are no mount or network
 * namespaces, so what the container would see at a mountPath, at its terminationMessagePath
 * or on a containerPort is somewhere else here.
 */
export interface ContainerLocals {
  /** Each volumeMount's mountPath and the local directory standing in for its volume. */
  mounts: readonly { mountPath: string; dir: string }[];
  terminationPath: string;
  /** The local file standing in for terminationPath. */
  terminationFile: string;
  /** Each containerPort of the pod and the local port standing in for it. */
  ports: ReadonlyMap<number, number>;
}

/**
 * An env value as the process must see it here: the terminationMessagePath becomes its
 * local file, a mountPath (or a path under it; the longest mount wins) its local
 * directory, a containerPort number its local port. Anything else is kept as it is.
 */
export function localValue(value: string, locals: ContainerLocals): string {
  if (value === locals.terminationPath) return locals.terminationFile;
  const mounts = [...locals.mounts].sort((a, b) => b.mountPath.length - a.mountPath.length);
  for (const { mountPath, dir } of mounts) {
    const base = mountPath.replace(/\/+$/, '');
    if (value === mountPath || value === base) return dir;
    if (value.startsWith(`${base}/`)) return `${dir}${value.slice(base.length)}`;
  }
  if (/^\d+$/.test(value)) {
    const port = locals.ports.get(Number(value));
    if (port !== undefined) return String(port);
  }
  return value;
}

/** The local directories of a container's volumeMounts, from its pod's volume directories. */
export function containerMounts(
  container: StandInContainer,
  volumeDirs: ReadonlyMap<string, string>,
): { mountPath: string; dir: string }[] {
  return (container.volumeMounts ?? []).map(({ name, mountPath }) => {
    const dir = volumeDirs.get(name);
    if (dir === undefined) throw new Error(`volumeMount '${name}' names no volume of the pod`);
    return { mountPath, dir };
  });
}

/**
 * The container's environment as the kubelet builds it: `envFrom` Secrets first (with
 * their prefix), then `env` (`value` or `valueFrom.secretKeyRef`) over them, every value
 * made local (localValue). A missing Secret or key that is not optional is an error (the
 * kubelet would hold the container in CreateContainerConfigError). Not served: ConfigMaps,
 * the downward API, resource fields and `$(VAR)` references.
 */
export function containerEnv(
  container: StandInContainer,
  secrets: SecretLookup,
  locals: ContainerLocals,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const ref = source.secretRef;
    if (!ref) throw new Error(`container '${container.name}': only envFrom.secretRef is served`);
    const secret = secrets(ref.name);
    if (!secret) {
      if (ref.optional) continue;
      throw new Error(`Secret '${ref.name}' not found`);
    }
    const keys = new Set([
      ...Object.keys(secret.data ?? {}),
      ...Object.keys(secret.stringData ?? {}),
    ]);
    for (const key of keys)
      env[`${source.prefix ?? ''}${key}`] = secretValue(secrets, ref.name, key);
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (variable.valueFrom && !ref)
      throw new Error(`env ${variable.name}: only valueFrom.secretKeyRef is served`);
    if (!ref) {
      env[variable.name] = variable.value ?? '';
      continue;
    }
    try {
      env[variable.name] = secretValue(secrets, ref.name, ref.key);
    } catch (err) {
      if (!ref.optional) throw err;
    }
  }
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [name, localValue(value, locals)]),
  );
}
