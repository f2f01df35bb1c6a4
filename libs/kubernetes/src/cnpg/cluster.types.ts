/**
 * The part of CNPG's postgresql.cnpg.io/v1 Cluster that pgcloud writes and reads, as JSON
 * (timestamps are RFC 3339 strings). The same fields as the vendored schema
 * (cluster-v1.schema.ts), which refuses any other. A field is optional here when pgcloud
 * may leave it out, so some that CNPG makes optional are required (the schema says which).
 */

/** A reference to a Secret in the Cluster's namespace. */
export interface LocalObjectReference {
  name: string;
}

/** One key of a Secret in the Cluster's namespace. */
export interface SecretKeySelector {
  name: string;
  key: string;
}

/** An owner of an object: deleting the owner deletes the object (garbage collection). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The metadata pgcloud sets and the fields the API server adds. */
export interface ClusterMetadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

/** The API server's record of who set which fields (opaque to pgcloud). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** A fresh server: initdb with the application database and its owner. */
export interface InitdbBootstrap {
  database: string;
  owner: string;
  /** basic-auth Secret with the owner's password. */
  secret: LocalObjectReference;
  dataChecksums?: boolean;
  encoding?: string;
  localeCollate?: string;
  localeCType?: string;
}

/** A server copied with pg_basebackup from an externalClusters entry (a restore's server). */
export interface PgBasebackupBootstrap {
  /** The name of the externalClusters entry to copy. */
  source: string;
  database?: string;
  owner?: string;
  secret?: LocalObjectReference;
}

/** Exactly one bootstrap method. */
export type ClusterBootstrap =
  | { initdb: InitdbBootstrap; pg_basebackup?: never }
  | { pg_basebackup: PgBasebackupBootstrap; initdb?: never };

/** A server outside the Cluster that bootstrap.pg_basebackup copies. */
export interface ExternalCluster {
  name: string;
  /** libpq connection parameters: host, port, user, dbname, sslmode, ... */
  connectionParameters: Record<string, string>;
  password?: SecretKeySelector;
  sslRootCert?: SecretKeySelector;
}

/** Kubernetes quantities, e.g. `500m`, `2Gi`. */
export interface ComputeResources {
  cpu?: string;
  memory?: string;
}

/** A PostgreSQL role CNPG keeps as declared. */
export interface ManagedRole {
  name: string;
  ensure: 'present' | 'absent';
  login: boolean;
  replication: boolean;
  superuser?: boolean;
  inherit?: boolean;
  /** -1 (CNPG's default) for no limit. */
  connectionLimit?: number;
  /** Roles it is made a member of (pg_read_all_stats, say). */
  inRoles?: string[];
  /** basic-auth Secret whose password is the role's (a SCRAM verifier, or plain). */
  passwordSecret: LocalObjectReference;
}

/** The spec pgcloud writes (CNPG's own backups stay off: no `backup`). */
export interface CnpgClusterSpec {
  instances: number;
  imageName?: string;
  primaryUpdateStrategy?: 'unsupervised' | 'supervised';
  /** Whether CNPG makes a PodDisruptionBudget for the primary (default true). */
  enablePDB?: boolean;
  enableSuperuserAccess?: boolean;
  superuserSecret?: LocalObjectReference;
  postgresql?: {
    /** postgresql.conf settings, every value a string. */
    parameters: Record<string, string>;
    /** pg_hba.conf lines, after CNPG's own. */
    pg_hba: string[];
  };
  bootstrap?: ClusterBootstrap;
  externalClusters?: ExternalCluster[];
  /** A standby of `source` (an externalClusters entry) while enabled; false promotes it. */
  replica?: { enabled: boolean; source: string };
  /** Required: without a pvcTemplate (outside the subset) CNPG needs a size. */
  storage: { size: string; storageClass?: string };
  resources?: { requests?: ComputeResources; limits?: ComputeResources };
  /**
   * Secret names: `<base>-tls` (kubernetes.io/tls), `<base>-ca` (ca.crt: the server's CA
   * and the client CA) and `<base>-replication-tls` (streaming_replica's certificate).
   */
  certificates?: {
    serverTLSSecret: string;
    serverCASecret: string;
    clientCASecret?: string;
    replicationTLSSecret?: string;
  };
  managed?: { roles: ManagedRole[] };
}

/** A standard Kubernetes condition, as CNPG writes them (e.g. type `Ready`). */
export interface ClusterCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime: string;
}

/** The status the operator writes (status subresource); pgcloud only reads it. */
export interface CnpgClusterStatus {
  /** e.g. `Cluster in healthy state` (CNPG_HEALTHY_PHASE). */
  phase?: string;
  instances?: number;
  readyInstances?: number;
  /** The primary's Pod name. */
  currentPrimary?: string;
  writeService?: string;
  conditions?: ClusterCondition[];
}

/** A postgresql.cnpg.io/v1 Cluster. */
export interface CnpgCluster {
  apiVersion: 'postgresql.cnpg.io/v1';
  kind: 'Cluster';
  metadata: ClusterMetadata;
  spec: CnpgClusterSpec;
  status?: CnpgClusterStatus;
}

/** The phase CNPG reports for a Cluster with every instance ready. */
export const CNPG_HEALTHY_PHASE = 'Cluster in healthy state';
