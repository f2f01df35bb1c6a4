import { resolve } from 'node:path';
import { CommonEnv, ConfigError, DURATION_PATTERN, validateEnv } from '@pgcloud/config';
import { pgBinDir } from '@pgcloud/postgres';
import {
  IsDefined,
  IsIn,
  IsInt,
  IsIP,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import {
  KUBERNETES_ONLY_SETTINGS,
  NAMESPACE_NAME,
  NAMESPACES_LIST,
  parseNamespaces,
  regionsNamedTwice,
  serviceAccountNamespace,
} from './driver-settings.js';

const withKubernetes = (config: ProvisionerConfig): boolean =>
  config.DATABASE_DRIVER === 'kubernetes';

/** database-provisioner settings (docs/configuration.md#database-provisioner). */
export class ProvisionerConfig extends CommonEnv {
  /**
   * The platform that runs the servers: `local` (this host) or `kubernetes` (a
   * CloudNativePG Cluster per database). The KUBERNETES_* settings and PGCLOUD_IMAGE are
   * refused with `local`; the local driver's own (PG_BIN_DIR, PG_OS_USER,
   * DATABASE_LISTEN_ADDRESS's servers) are ignored with `kubernetes`, since a deployment's
   * shared settings carry them. DATABASE_HOST then only names the host of records older
   * than the kubernetes driver (a migration's), which were the local driver's.
   */
  @IsIn(['local', 'kubernetes'])
  DATABASE_DRIVER: 'local' | 'kubernetes' = 'local';

  /**
   * `region=namespace,...`: the namespace of each region's Clusters; every region of REGIONS
   * needs one (checked at start: the log and /readyz).
   */
  @ValidateIf(withKubernetes)
  @IsDefined({ message: 'required with DATABASE_DRIVER=kubernetes' })
  @Matches(NAMESPACES_LIST, {
    message:
      'must be region=namespace pairs separated by commas, such as eu-west=pgcloud-databases',
  })
  KUBERNETES_NAMESPACES?: string;

  /**
   * Where the deployment CA's Secret (`pgcloud-ca`) lives; default: the provisioner pod's own
   * namespace, so it is required outside a pod.
   */
  @ValidateIf(withKubernetes)
  @IsOptional()
  @Matches(NAMESPACE_NAME, { message: 'must be a namespace name' })
  KUBERNETES_CA_NAMESPACE?: string;

  /**
   * Each database's Service: reached inside the cluster only, or through a cloud load
   * balancer (an address per database).
   */
  @ValidateIf(withKubernetes)
  @IsIn(['ClusterIP', 'LoadBalancer'])
  KUBERNETES_SERVICE_TYPE: 'ClusterIP' | 'LoadBalancer' = 'ClusterIP';

  /** The PostgreSQL image CloudNativePG runs (its own images: the operator expects them). */
  @ValidateIf(withKubernetes)
  @IsString()
  KUBERNETES_POSTGRES_IMAGE: string = 'ghcr.io/cloudnative-pg/postgresql:15';

  /** The StorageClass of the servers' volumes; default: the cluster's default class. */
  @ValidateIf(withKubernetes)
  @IsOptional()
  @Matches(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, { message: 'must be a StorageClass name' })
  KUBERNETES_STORAGE_CLASS?: string;

  /**
   * How long, in seconds, a new or restarted Cluster may take to be ready (pods scheduled,
   * volume bound).
   */
  @ValidateIf(withKubernetes)
  @IsInt()
  @Min(1)
  KUBERNETES_READY_TIMEOUT_SECONDS: number = 600;

  /** How long a restore's Job may take to build the data, in seconds (6 hours). */
  @ValidateIf(withKubernetes)
  @IsInt()
  @Min(1)
  KUBERNETES_RESTORE_TIMEOUT_SECONDS: number = 21_600;

  /** pgcloud's own image (the provisioner's), which a restore's Kubernetes Job runs. */
  @ValidateIf(withKubernetes)
  @IsDefined({ message: 'required with DATABASE_DRIVER=kubernetes' })
  @IsString()
  PGCLOUD_IMAGE?: string;

  /**
   * The object store backup-service and pitr-worker keep backups and WAL in (the same
   * setting as theirs): a restore downloads only from links to its origin.
   */
  @IsUrl(
    { require_tld: false, protocols: ['http', 'https'], require_protocol: true },
    { message: 'must be the http(s) URL of an S3-compatible store' },
  )
  S3_ENDPOINT!: string;

  /** PostgreSQL's server binaries; default: where `pg_config --bindir` says. */
  @IsOptional()
  @IsString()
  PG_BIN_DIR?: string;

  /** The unprivileged OS user that runs PostgreSQL when we run as root. */
  @Matches(/^[a-z_][a-z0-9_-]*$/, { message: 'must be an OS user name' })
  PG_OS_USER: string = 'postgres';

  /** Where local servers, keys and the CA live; PostgreSQL's user must reach it. */
  @IsString()
  DATA_DIR: string = '.data';

  /** The host name or address in connection strings; the servers' certificates name it. */
  @IsString()
  DATABASE_HOST: string = '127.0.0.1';

  /** The one address local servers listen on (0.0.0.0 for every IPv4 interface). */
  @IsIP(undefined, { message: 'must be one IP address, such as 127.0.0.1 or 0.0.0.0' })
  DATABASE_LISTEN_ADDRESS: string = '127.0.0.1';

  /** Ports for local servers, `first-last`, within 1024-65535. */
  @Matches(/^\d{2,5}-\d{2,5}$/, { message: 'must be first-last, such as 20000-20999' })
  DATABASE_PORT_RANGE: string = '20000-20999';

  /**
   * 32 bytes, base64 (`openssl rand -base64 32`): seals database passwords at rest
   * (AES-256-GCM). Unset: one is generated under DATA_DIR/keys/.
   */
  @IsOptional()
  @IsString()
  ENCRYPTION_KEY?: string;

  /** Databases a project may have on the Free tier. */
  @IsInt() @Min(1) FREE_MAX_DATABASES_PER_PROJECT: number = 3;
  /** The most vCPUs a Free-tier database may have. */
  @IsNumber() @Min(0.25) FREE_MAX_CPU: number = 1;
  /** The most memory a Free-tier database may have, in GiB. */
  @IsNumber() @Min(0.25) FREE_MAX_MEMORY: number = 2;
  /** The most storage a Free-tier database may have, in GiB. */
  @IsNumber() @Min(1) FREE_MAX_STORAGE: number = 10;

  /**
   * How often, in seconds, running databases are checked by connecting, and restarted when
   * down.
   */
  @IsInt()
  @Min(1)
  @Max(3600)
  RECONCILE_INTERVAL_SECONDS: number = 15;

  /**
   * The storage fence: a server whose data passes its limit by this share of its storage
   * (at least STORAGE_FENCE_GRACE_MIN_MIB) is held read-only, with no write of any kind,
   * until a restore brings it under, a cleanup window lifts it, or it is deleted
   * (docs/api/databases.md#storage).
   */
  @IsInt()
  @Min(1)
  @Max(100)
  STORAGE_FENCE_GRACE_PERCENT: number = 10;

  /** The least grace of the storage fence, in MiB, whatever STORAGE_FENCE_GRACE_PERCENT gives. */
  @IsInt()
  @Min(0)
  @Max(1_048_576)
  STORAGE_FENCE_GRACE_MIN_MIB: number = 256;

  /**
   * The watermark of the disk local servers share: with less of DATA_DIR's file system
   * free, new servers are refused (503) and the server furthest over its limit is fenced
   * each reconcile pass. 0 turns it off.
   */
  @IsInt()
  @Min(0)
  @Max(90)
  DATA_DIR_MIN_FREE_PERCENT: number = 10;

  /**
   * How long, in seconds, a cleanup window (POST .../storage/cleanup) lifts the fence
   * (docs/api/databases.md#cleanup).
   */
  @IsInt()
  @Min(1)
  @Max(86_400)
  STORAGE_CLEANUP_WINDOW_SECONDS: number = 900;

  /** How often a database's cleanup window can be opened: once per this many seconds. */
  @IsInt()
  @Min(1)
  @Max(86_400)
  STORAGE_CLEANUP_COOLDOWN_SECONDS: number = 3600;

  /**
   * How long, in seconds, a server without a record stays quarantined (stopped, under
   * DATA_DIR/local/quarantine) before it is deleted (7 days).
   */
  @IsInt()
  @Min(1)
  QUARANTINE_GRACE_SECONDS: number = 604_800;

  /**
   * Servers without a record one pass may quarantine; more at once is taken for the wrong
   * metadata database (DATABASE_URL), and the pass touches none of them.
   */
  @IsInt()
  @Min(0)
  QUARANTINE_MAX_SERVERS: number = 3;

  /**
   * How long a job's lease lasts, in seconds, renewed every third of it: a worker that cannot
   * renew stops the job's step before it lapses; after a crash, its work resumes within this.
   */
  @IsInt()
  @Min(2)
  @Max(600)
  JOB_LEASE_SECONDS: number = 30;

  /**
   * How often a running restore's numbers (bytes downloaded, segments replayed, its ETA) are
   * written to its record at most; a client reading it sees them this fresh.
   */
  @IsInt()
  @Min(100)
  @Max(2000)
  RESTORE_PROGRESS_INTERVAL_MS: number = 1000;

  /** How often, in seconds, databases whose expires_at passed are looked for and removed. */
  @IsInt()
  @Min(1)
  @Max(3600)
  DATABASE_EXPIRY_SWEEP_SECONDS: number = 60;

  /**
   * How often each Free-tier database's backup is proven restorable by an automated drill
   * (docs/api/drills.md#automated-drills): a duration such as `7d`, `12h` or `30m`.
   */
  @Matches(DURATION_PATTERN, { message: 'must be a duration such as 7d, 12h or 30m' })
  DRILL_INTERVAL_FREE: string = '7d';

  /** The same for Pro-tier databases. */
  @Matches(DURATION_PATTERN, { message: 'must be a duration such as 1d, 12h or 30m' })
  DRILL_INTERVAL_PRO: string = '1d';

  /** Drills that run at once in the whole deployment, whichever replicas run them. */
  @IsInt()
  @Min(1)
  @Max(64)
  DRILL_CONCURRENCY: number = 1;

  /** Manual drills a Free-tier database may have in 24 hours. */
  @IsInt() @Min(0) DRILL_DAILY_LIMIT_FREE: number = 3;
  /** Manual drills a Pro-tier database may have in 24 hours. */
  @IsInt() @Min(0) DRILL_DAILY_LIMIT_PRO: number = 20;

  /** How often, in seconds, the drill schedule looks for databases due a drill. */
  @IsInt()
  @Min(1)
  @Max(3600)
  DRILL_SCHEDULE_SECONDS: number = 60;

  get portRange(): { first: number; last: number } {
    const [first, last] = this.DATABASE_PORT_RANGE.split('-').map(Number);
    return { first: first ?? 0, last: last ?? 0 };
  }

  get dataDir(): string {
    return resolve(this.DATA_DIR);
  }

  get pgBinDir(): string {
    return pgBinDir(this.PG_BIN_DIR);
  }

  /** KUBERNETES_NAMESPACES, by region. */
  get kubernetesNamespaces(): Record<string, string> {
    return parseNamespaces(this.KUBERNETES_NAMESPACES ?? '');
  }
}

/**
 * Reads and checks the settings; a bad value stops the service at start. `podNamespace`
 * answers the namespace of the pod the provisioner runs in, when it runs in one (the
 * default CA namespace of the kubernetes driver).
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  podNamespace: () => string | undefined = serviceAccountNamespace,
): ProvisionerConfig {
  const config = validateEnv(ProvisionerConfig, env);
  if (config.DATABASE_DRIVER === 'kubernetes') checkKubernetes(config, podNamespace);
  else refuseKubernetesSettings(env);
  const { first, last } = config.portRange;
  if (!(first >= 1024 && first <= last && last <= 65535)) {
    throw new Error(
      `DATABASE_PORT_RANGE=${config.DATABASE_PORT_RANGE}: must be first-last within 1024-65535`,
    );
  }
  return config;
}

/** The kubernetes driver's settings that hold together, and the CA namespace's default. */
function checkKubernetes(config: ProvisionerConfig, podNamespace: () => string | undefined) {
  const twice = regionsNamedTwice(config.KUBERNETES_NAMESPACES ?? '');
  if (twice.length > 0)
    throw new ConfigError([
      `KUBERNETES_NAMESPACES=${JSON.stringify(config.KUBERNETES_NAMESPACES)}: ${twice.join(', ')} named more than once`,
    ]);
  config.KUBERNETES_CA_NAMESPACE ??= podNamespace();
  if (!config.KUBERNETES_CA_NAMESPACE)
    throw new ConfigError([
      'KUBERNETES_CA_NAMESPACE=null: required outside a Kubernetes pod (in one, the pod’s namespace is the default)',
    ]);
}

/** With the local driver, a kubernetes driver setting is a mistake: the driver was meant. */
function refuseKubernetesSettings(env: Record<string, string | undefined>): void {
  const set = KUBERNETES_ONLY_SETTINGS.filter(
    (name) => env[name] !== undefined && env[name] !== '',
  );
  if (set.length > 0)
    throw new ConfigError(
      set.map(
        (name) =>
          `${name}: only DATABASE_DRIVER=kubernetes reads it; DATABASE_DRIVER is local (select kubernetes, or remove ${name})`,
      ),
    );
}
