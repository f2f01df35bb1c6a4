/**
 * The Kubernetes names pgcloud gives a server's objects. A server id is `srv_<lowercase
 * alnum>`; Kubernetes names allow no `_`, so its objects share the base `srv-<same>`.
 */

const SERVER_ID = /^srv_[a-z0-9]+$/;
const CLUSTER_NAME = /^(srv-[a-z0-9]+)-g([1-9][0-9]*)$/;

/** CNPG refuses a Cluster whose name is longer than this (its admission webhook). */
export const MAX_CLUSTER_NAME_LENGTH = 50;

/** `srv_abc` -> `srv-abc`: the base of every name of the server's objects (its Service's). */
export function kubeName(serverId: string): string {
  if (!SERVER_ID.test(serverId))
    throw new Error(`${JSON.stringify(serverId)} is not a server id (srv_ and lowercase a-z0-9)`);
  return `srv-${serverId.slice('srv_'.length)}`;
}

/**
 * The name of the server's CNPG Cluster of one generation: `<base>-g<N>`, from `-g1`; a
 * restore builds the next generation beside the live one.
 */
export function clusterName(serverId: string, generation: number): string {
  if (!Number.isSafeInteger(generation) || generation < 1)
    throw new Error(`a Cluster generation is an integer from 1, not ${generation}`);
  const name = `${kubeName(serverId)}-g${generation}`;
  if (name.length > MAX_CLUSTER_NAME_LENGTH)
    throw new Error(`${name} is longer than CNPG's ${MAX_CLUSTER_NAME_LENGTH} characters`);
  return name;
}

/** The base and generation of a name `clusterName` made; undefined for any other name. */
export function parseClusterName(name: string): { base: string; generation: number } | undefined {
  const match = CLUSTER_NAME.exec(name);
  if (!match) return undefined;
  const generation = Number(match[2]);
  return Number.isSafeInteger(generation) ? { base: match[1], generation } : undefined;
}

/** The Secrets pgcloud makes for a server, by role. */
export interface ServerSecretNames {
  /** basic-auth: the application role (username = database name, password = SCRAM verifier). */
  app: string;
  /** basic-auth: pgcloud_replication (password = SCRAM verifier). */
  replication: string;
  /** basic-auth: postgres, with a plain password: the driver logs in with it. */
  /** The streaming_replica client certificate CNPG's replicas log in with. */
  replicationTls: string;
  /** kubernetes.io/tls: the server's certificate and key, issued by the deployment CA. */
  tls: string;
  /** Opaque: ca.crt only, never the CA's key. */
  ca: string;
}

/** `<base>-app`, `-replication`, `-replication-tls`, `-tls` and `-ca` for a server. */
export function secretNames(serverId: string): ServerSecretNames {
  const base = kubeName(serverId);
  return {
    app: `${base}-app`,
    replication: `${base}-replication`,
    replicationTls: `${base}-replication-tls`,
    tls: `${base}-tls`,
    ca: `${base}-ca`,
  };
}

/** pgcloud's Service for a server: the base name itself, whichever generation serves. */
export function serviceName(serverId: string): string {
  return kubeName(serverId);
}

/** The Pod CNPG runs as a Cluster's first instance: `<cluster>-1`. */
export function firstInstanceName(cluster: string): string {
  return `${cluster}-1`;
}
