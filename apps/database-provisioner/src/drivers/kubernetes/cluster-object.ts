import type { DatabaseConfig } from '@pgcloud/contracts';
import { CLUSTER_KIND, CNPG_API_VERSION, CNPG_HEALTHY_PHASE } from '@pgcloud/kubernetes';
import { SUPERUSER } from '@pgcloud/postgres';
import { REPLICATION_ROLE } from '../database-driver.js';
import { sizeSettings } from '../server-size.js';
import { RESTORE_ID_ANNOTATION } from './restore-objects.js';
import type { ServerNames } from './server-names.js';

/**
 * The volume holds the WAL too, which `usedBytes` (the storage limit) does not count: up to
 * max_slot_wal_keep_size (2 GB) held for a lagging receiver, max_wal_size (1 GB) between
 * checkpoints and CNPG's wal_keep_size (512 MB). Without this room a database at its
 * limit would fill its volume before it is made read-only.
 */
const WAL_HEADROOM_GIB = 4;

/** What the Cluster of one database is made from. */
export interface ClusterInput {
  names: ServerNames;
  /** The Cluster's name: the server's, with its generation (`srv-...-g1`). */
  clusterName: string;
  databaseName: string;
  config: DatabaseConfig;
  /** The PostgreSQL image CNPG runs (KUBERNETES_POSTGRES_IMAGE). */
  imageName: string;
  storageClass?: string;
  readOnly: boolean;
}

/**
 * Settings pgcloud gives every server on Kubernetes, as CNPG takes them: the size settings
 * the local driver uses too, commit times for PITR targets, and a cap on the WAL a lost
 * receiver's slot may hold. CNPG owns the rest (ports, TLS files, wal_level, logging).
 */
export function clusterParameters(
  config: DatabaseConfig,
  readOnly: boolean,
): Record<string, string> {
  const settings = {
    ...sizeSettings(config),
    track_commit_timestamp: 'on',
    max_slot_wal_keep_size: '2GB',
    password_encryption: 'scram-sha-256',
    default_transaction_read_only: readOnly ? 'on' : 'off',
  };
  return Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, String(value)]));
}

/**
 * TCP takes TLS only: the superuser by a client certificate of the deployment CA (which
 * only the provisioner holds; the role has no password), everyone else by scram-sha-256.
 * These lines come after CNPG's own (its operator and streaming replicas, by
 * certificate) and before the catch-all `host all all all` line CNPG appends, which would
 * let a login without TLS in: the reject lines stop it.
 */
export const CLUSTER_PG_HBA = [
  `hostssl all ${SUPERUSER} all cert`,
  `hostssl replication ${SUPERUSER} all reject`,
  `hostssl replication ${REPLICATION_ROLE} all scram-sha-256`,
  'hostssl all all all scram-sha-256',
  'hostnossl all all all reject',
  'hostnossl replication all all reject',
];

/** The Cluster's resources for a size: as much requested as allowed, so the pod is Guaranteed. */
export function clusterResources(config: DatabaseConfig): Record<string, Record<string, string>> {
  const memory = `${Math.round(config.memory * 1024)}Mi`;
  const cpu = `${Math.round(config.cpu * 1000)}m`;
  return { requests: { cpu, memory }, limits: { cpu, memory } };
}

/** The volume's size for a storage limit: the limit and the WAL's headroom. */
export function clusterStorageSize(config: DatabaseConfig): string {
  return `${config.storage + WAL_HEADROOM_GIB}Gi`;
}

/**
 * One database's CNPG Cluster: one instance, its size as resources and settings, its
 * storage, pgcloud's certificates, the application and replication roles managed by CNPG
 * with SCRAM verifiers from pgcloud's Secrets, and no backups of CNPG's own (pgcloud
 * takes base backups and archives WAL itself).
 */
export function buildCluster(input: ClusterInput): Record<string, unknown> {
  const { names, config } = input;
  return {
    apiVersion: CNPG_API_VERSION,
    kind: CLUSTER_KIND,
    metadata: {
      name: input.clusterName,
      namespace: names.namespace,
      labels: names.labels,
    },
    spec: {
      instances: 1,
      // One instance: CNPG's primary PodDisruptionBudget would block every node drain.
      enablePDB: false,
      imageName: input.imageName,
      primaryUpdateStrategy: 'unsupervised',
      // The superuser has no password: the provisioner logs in with its certificate.
      enableSuperuserAccess: false,
      postgresql: {
        parameters: clusterParameters(config, input.readOnly),
        pg_hba: CLUSTER_PG_HBA,
      },
      bootstrap: {
        initdb: {
          database: input.databaseName,
          owner: input.databaseName,
          secret: { name: names.appSecret },
          dataChecksums: true,
        },
      },
      storage: {
        size: clusterStorageSize(config),
        ...(input.storageClass ? { storageClass: input.storageClass } : {}),
      },
      resources: clusterResources(config),
      certificates: {
        serverTLSSecret: names.tlsSecret,
        serverCASecret: names.caSecret,
        // Client certificates are the deployment CA's too; without its key there, CNPG
        // takes its replicas' certificate from pgcloud.
        clientCASecret: names.caSecret,
        replicationTLSSecret: names.replicationTlsSecret,
      },
      managed: {
        roles: [
          {
            name: input.databaseName,
            ensure: 'present',
            login: true,
            replication: false,
            passwordSecret: { name: names.appSecret },
          },
          {
            name: REPLICATION_ROLE,
            ensure: 'present',
            login: true,
            replication: true,
            // pitr-worker reads its receiver's progress in pg_stat_replication.
            inRoles: ['pg_read_all_stats'],
            passwordSecret: { name: names.replicationSecret },
          },
        ],
      },
    },
  };
}

/**
 * A restore's next generation: the live Cluster's spec (size, settings, certificates,
 * roles) copied with pg_basebackup from the restore Job's server (an externalClusters
 * entry) instead of initdb, read-only, and kept a standby of that server (on hold, as the
 * local driver's restored data starts) until the swap is checked and it is promoted.
 */
export function buildRestoredCluster(
  live: ClusterObject,
  input: { names: ServerNames; clusterName: string; restoreId: string; source: { name: string } },
): Record<string, unknown> {
  const {
    bootstrap: _bootstrap,
    externalClusters: _external,
    replica: _replica,
    ...spec
  } = live.spec ?? {};
  const postgresql = spec.postgresql as { parameters?: Record<string, string> } | undefined;
  return {
    apiVersion: CNPG_API_VERSION,
    kind: CLUSTER_KIND,
    metadata: {
      name: input.clusterName,
      namespace: input.names.namespace,
      labels: input.names.labels,
      annotations: { [RESTORE_ID_ANNOTATION]: input.restoreId },
    },
    spec: {
      ...spec,
      postgresql: {
        ...postgresql,
        parameters: { ...postgresql?.parameters, default_transaction_read_only: 'on' },
      },
      bootstrap: { pg_basebackup: { source: input.source.name } },
      externalClusters: [input.source],
      replica: { enabled: true, source: input.source.name },
    },
  };
}

/** A Cluster as read back: what pgcloud wrote, and the status CNPG keeps. */
export interface ClusterObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown> & { replica?: { enabled?: boolean; source?: string } };
  status?: {
    phase?: string;
    readyInstances?: number;
    conditions?: { type: string; status: string }[];
  };
}

/** CNPG's word for a Cluster that serves: its Ready condition, or the healthy phase. */
export function isHealthy(cluster: ClusterObject): boolean {
  const ready = cluster.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (ready) return ready.status === 'True';
  return cluster.status?.phase === CNPG_HEALTHY_PHASE;
}
