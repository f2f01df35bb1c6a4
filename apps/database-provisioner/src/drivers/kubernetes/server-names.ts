import {
  clusterName as generationName,
  kubeName,
  MANAGED_BY_LABEL,
  MANAGED_BY_PGCLOUD,
  parseClusterName,
  pgcloudLabels,
  secretNames,
} from '@pgcloud/kubernetes';

/** The label every object pgcloud makes carries, to find them again. */
export const MANAGED_BY = { [MANAGED_BY_LABEL]: MANAGED_BY_PGCLOUD } as const;

/** On a quarantined server's Service and Clusters: when (Unix seconds) it was set aside. */
export const QUARANTINED_AT_LABEL = 'pgcloud.dev/quarantined-at';

/** The names of one server's objects in its namespace (@pgcloud/kubernetes names them). */
export interface ServerNames {
  serverId: string;
  namespace: string;
  /** `srv-...`: the server id as a Kubernetes name; pgcloud's Service carries it. */
  base: string;
  appSecret: string;
  replicationSecret: string;
  replicationTlsSecret: string;
  tlsSecret: string;
  caSecret: string;
  labels: Record<string, string>;
}

/** The names of a server's objects; a server id that is not `srv_[a-z0-9]+` is refused. */
export function serverNames(serverId: string, namespace: string): ServerNames {
  const secrets = secretNames(serverId);
  return {
    serverId,
    namespace,
    base: kubeName(serverId),
    appSecret: secrets.app,
    replicationSecret: secrets.replication,
    replicationTlsSecret: secrets.replicationTls,
    tlsSecret: secrets.tls,
    caSecret: secrets.ca,
    labels: pgcloudLabels(serverId),
  };
}

/** The Cluster of a server's `generation` (1 at creation, one more per restore). */
export function clusterName(names: ServerNames, generation: number): string {
  return generationName(names.serverId, generation);
}

/** The generation of a Cluster of this server, from its name (undefined for another's). */
export function generationOf(names: ServerNames, cluster: string): number | undefined {
  const parsed = parseClusterName(cluster);
  return parsed?.base === names.base ? parsed.generation : undefined;
}
