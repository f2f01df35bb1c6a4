/** Labels pgcloud puts on every object it makes, to find them again. */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'pgcloud' } as const;
export const SERVER_ID_LABEL = 'pgcloud.dev/server-id';

/** The names of one server's objects in its namespace (design: k8s object names). */
export interface ServerNames {
  serverId: string;
  namespace: string;
  /** `srv-...`: the server id as a Kubernetes name; pgcloud's Service carries it. */
  base: string;
  appSecret: string;
  replicationSecret: string;
  superuserSecret: string;
  tlsSecret: string;
  caSecret: string;
  labels: Record<string, string>;
}

const SERVER_ID = /^srv_[a-z0-9]+$/;

/** The names of a server's objects; a server id that is not `srv_[a-z0-9]+` is refused. */
export function serverNames(serverId: string, namespace: string): ServerNames {
  if (!SERVER_ID.test(serverId)) throw new Error(`not a server id: '${serverId}'`);
  const base = serverId.replace('_', '-');
  return {
    serverId,
    namespace,
    base,
    appSecret: `${base}-app`,
    replicationSecret: `${base}-replication`,
    superuserSecret: `${base}-superuser`,
    tlsSecret: `${base}-tls`,
    caSecret: `${base}-ca`,
    labels: { ...MANAGED_BY, [SERVER_ID_LABEL]: serverId },
  };
}

/** The Cluster of a server's `generation` (1 at creation, one more per restore). */
export function clusterName(names: ServerNames, generation: number): string {
  return `${names.base}-g${generation}`;
}

/** The generation of a Cluster of this server, from its name (undefined for another's). */
export function generationOf(names: ServerNames, cluster: string): number | undefined {
  const match = new RegExp(`^${names.base}-g(\\d+)$`).exec(cluster);
  return match ? Number(match[1]) : undefined;
}

/** On a quarantined server's Service and Clusters: when (Unix seconds) it was set aside. */
export const QUARANTINED_AT_LABEL = 'pgcloud.dev/quarantined-at';
