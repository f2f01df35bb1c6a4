/**
 * Label and annotation names pgcloud writes or selects on, and the fixed names of the CNPG
 * API and of the objects around a server.
 */

/** The CNPG release whose Cluster API pgcloud writes to (src/cnpg/cluster-v1.schema.ts). */
export const CNPG_RELEASE = '1.25.1';
/** CNPG's API group. */
export const CNPG_GROUP = 'postgresql.cnpg.io';
/** The version of CNPG's API pgcloud uses. */
export const CNPG_VERSION = 'v1';
/** `apiVersion` of CNPG objects. */
export const CNPG_API_VERSION = `${CNPG_GROUP}/${CNPG_VERSION}`;
/** The kind of a CNPG PostgreSQL cluster. */
export const CLUSTER_KIND = 'Cluster';
/** Its plural, for REST paths: /apis/postgresql.cnpg.io/v1/namespaces/<ns>/clusters. */
export const CLUSTER_PLURAL = 'clusters';

/** Standard label naming the tool that manages an object. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value of MANAGED_BY_LABEL on everything pgcloud creates. */
export const MANAGED_BY_PGCLOUD = 'pgcloud';
/** The server id (`srv_...`) an object belongs to. */
export const SERVER_ID_LABEL = 'pgcloud.dev/server-id';

/** The labels pgcloud puts on every object it creates for a server. */
export function pgcloudLabels(serverId: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY_PGCLOUD, [SERVER_ID_LABEL]: serverId };
}

/** The role CNPG's replicas stream as, by a client certificate (replicationTLSSecret). */
export const CNPG_REPLICATION_USER = 'streaming_replica';

/** CNPG's label on a Cluster's Pods: the Cluster's name. */
export const CNPG_CLUSTER_LABEL = 'cnpg.io/cluster';
/** CNPG's label on a Cluster's Pods: `primary` or `replica`. */
export const CNPG_INSTANCE_ROLE_LABEL = 'cnpg.io/instanceRole';
/** CNPG's older role label, still set on its Pods beside CNPG_INSTANCE_ROLE_LABEL. */
export const CNPG_ROLE_LABEL = 'role';
/** The instance role value of the primary. */
export const PRIMARY_ROLE = 'primary';

/** The selector of pgcloud's Service: the primary of one Cluster (one generation). */
export function primarySelector(cluster: string): Record<string, string> {
  return { [CNPG_CLUSTER_LABEL]: cluster, [CNPG_INSTANCE_ROLE_LABEL]: PRIMARY_ROLE };
}

/** CNPG's declarative hibernation: `on` stops the Cluster's Pods (keeping its data). */
export const HIBERNATION_ANNOTATION = 'cnpg.io/hibernation';
/** Values of HIBERNATION_ANNOTATION. */
export type HibernationState = 'on' | 'off';

/** The deployment CA (tls.crt, tls.key) in the provisioner's own namespace. */
export const DEPLOYMENT_CA_SECRET = 'pgcloud-ca';
/** The name of the Service's one port. */
export const SERVICE_PORT_NAME = 'postgres';
/** The port PostgreSQL listens on in CNPG's Pods: the Service's targetPort. */
export const POSTGRES_CONTAINER_PORT = 5432;
/** The role pgcloud's backup and PITR services replicate with. */
export const REPLICATION_ROLE = 'pgcloud_replication';
/** The superuser CNPG's superuserSecret names. */
export const SUPERUSER_ROLE = 'postgres';
