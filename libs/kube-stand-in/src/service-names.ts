/** A Service named by namespace and name. */
export interface ServiceName {
  namespace: string;
  name: string;
}

// An RFC 1123 label, as Service and namespace names are.
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CLUSTER_SUFFIXES = ['.svc.cluster.local', '.svc'];

/**
 * The Service a host name names in cluster DNS: `<svc>.<ns>`, `<svc>.<ns>.svc` or
 * `<svc>.<ns>.svc.cluster.local` (case-insensitive, a trailing dot allowed); undefined for
 * any other name. Real cluster DNS also answers the bare `<svc>` from inside the Service's
 * namespace (through the pod's search path), and pod and headless records; none of that here.
 */
export function serviceOfHost(host: string): ServiceName | undefined {
  let rest = host.toLowerCase().replace(/\.$/, '');
  const suffix = CLUSTER_SUFFIXES.find((end) => rest.endsWith(end));
  if (suffix) rest = rest.slice(0, -suffix.length);
  const parts = rest.split('.');
  if (parts.length !== 2) return undefined;
  const [name, namespace] = parts;
  if (!LABEL.test(name) || !LABEL.test(namespace) || name.length > 63 || namespace.length > 63)
    return undefined;
  return { namespace, name };
}
