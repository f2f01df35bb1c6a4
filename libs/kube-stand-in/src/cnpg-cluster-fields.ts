/**
 * The fields of Kubernetes objects that the CNPG stand-in and the Service proxies read:
 * structural subsets of a `postgresql.cnpg.io/v1` Cluster (CNPG 1.25), a v1 Secret and a
 * v1 Service, so that the full types of @pgcloud/kubernetes fit them.
 */

/** Names an object in the same namespace. */
export interface LocalObjectReference {
  name: string;
}

/** One key of a Secret in the same namespace. */
export interface SecretKeySelector {
  name: string;
  key: string;
}

/** One entry of `spec.managed.roles`. */
export interface StandInManagedRole {
  name: string;
  ensure?: 'present' | 'absent';
  login?: boolean;
  replication?: boolean;
  superuser?: boolean;
  inherit?: boolean;
  connectionLimit?: number;
  /** Roles it is made a member of. */
  inRoles?: string[];
  passwordSecret?: LocalObjectReference;
}

/** One entry of `spec.externalClusters`: a server to clone from. */
export interface StandInExternalCluster {
  name: string;
  connectionParameters?: Record<string, string>;
  password?: SecretKeySelector;
  sslRootCert?: SecretKeySelector;
}

/** The `spec.bootstrap` methods the stand-in knows. */
export interface StandInBootstrap {
  initdb?: {
    database?: string;
    owner?: string;
    secret?: LocalObjectReference;
    dataChecksums?: boolean;
    encoding?: string;
    localeCollate?: string;
    localeCType?: string;
  };
  pg_basebackup?: {
    source: string;
    database?: string;
    owner?: string;
    secret?: LocalObjectReference;
  };
}

/** What the stand-in reads of a CNPG Cluster. */
export interface StandInCluster {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec: {
    instances?: number;
    enableSuperuserAccess?: boolean;
    superuserSecret?: LocalObjectReference;
    postgresql?: { parameters?: Record<string, string>; pg_hba?: string[] };
    bootstrap?: StandInBootstrap;
    externalClusters?: StandInExternalCluster[];
    certificates?: {
      serverTLSSecret?: string;
      serverCASecret?: string;
      clientCASecret?: string;
      replicationTLSSecret?: string;
    };
    managed?: { roles?: StandInManagedRole[] };
    /** A replica cluster: while enabled, its primary is a standby of `source`. */
    replica?: { enabled?: boolean; source?: string };
  };
}

/** What the stand-in reads of a v1 Secret: `data` is base64, as the API serves it. */
export interface StandInSecret {
  data?: Record<string, string>;
  /** Write-only on a real API server (it folds it into `data`); read here too. */
  stringData?: Record<string, string>;
}

/** Finds a Secret of the Cluster's namespace by name. */
export type SecretLookup = (name: string) => StandInSecret | undefined;

/**
 * One key of a Secret, decoded. A missing Secret or key is an error naming both: CNPG
 * would wait for it and report the Cluster as not ready; the stand-in fails at once.
 */
export function secretValue(secrets: SecretLookup, name: string, key: string): string {
  const secret = secrets(name);
  if (!secret) throw new Error(`Secret '${name}' not found`);
  const encoded = secret.data?.[key];
  if (encoded !== undefined) return Buffer.from(encoded, 'base64').toString('utf8');
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return plain;
  throw new Error(`Secret '${name}' has no key '${key}'`);
}

/**
 * The password of a `kubernetes.io/basic-auth` Secret for `role`. CNPG requires the
 * Secret's `username` to be the role's name; the stand-in refuses a mismatch.
 */
export function basicAuthPassword(secrets: SecretLookup, name: string, role: string): string {
  const username = secretValue(secrets, name, 'username');
  if (username !== role)
    throw new Error(`Secret '${name}' is for '${username}', not for the role '${role}'`);
  return secretValue(secrets, name, 'password');
}
