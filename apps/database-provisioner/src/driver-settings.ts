import { readFileSync } from 'node:fs';

/** Settings only the kubernetes driver reads: refused when the local driver is selected. */
export const KUBERNETES_ONLY_SETTINGS = [
  'KUBERNETES_NAMESPACES',
  'KUBERNETES_CA_NAMESPACE',
  'KUBERNETES_SERVICE_TYPE',
  'KUBERNETES_POSTGRES_IMAGE',
  'KUBERNETES_STORAGE_CLASS',
  'KUBERNETES_READY_TIMEOUT_SECONDS',
  'KUBERNETES_RESTORE_TIMEOUT_SECONDS',
  'PGCLOUD_IMAGE',
] as const;

const NAMESPACE = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
// Region ids as project-service's REGIONS takes them.
const PAIR = `[a-z0-9-]+\\s*=\\s*${NAMESPACE}`;

/** A namespace's name (an RFC 1123 label). */
export const NAMESPACE_NAME = new RegExp(`^${NAMESPACE}$`);

/** KUBERNETES_NAMESPACES: `region=namespace` pairs separated by commas. */
export const NAMESPACES_LIST = new RegExp(`^\\s*${PAIR}(\\s*,\\s*${PAIR})*\\s*$`);

function pairs(list: string): [string, string][] {
  return list
    .split(',')
    .map((pair) => pair.split('=').map((part) => part.trim()))
    .filter((parts): parts is [string, string] => parts.length === 2 && parts[0] !== '');
}

/** KUBERNETES_NAMESPACES (already matched against NAMESPACES_LIST), by region. */
export function parseNamespaces(list: string): Record<string, string> {
  return Object.fromEntries(pairs(list));
}

/** The regions a KUBERNETES_NAMESPACES list names more than once (which one would win?). */
export function regionsNamedTwice(list: string): string[] {
  const regions = pairs(list).map(([region]) => region);
  return [...new Set(regions.filter((region, index) => regions.indexOf(region) !== index))];
}

/** Where Kubernetes writes the namespace of a pod whose ServiceAccount token is mounted. */
export const SERVICE_ACCOUNT_NAMESPACE_FILE =
  '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The namespace this process's pod runs in, or undefined outside a pod (or without a token). */
export function serviceAccountNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
