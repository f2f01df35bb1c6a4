import type { DatabaseConfig } from '@pgcloud/contracts';

/** The role base backups and WAL streaming log in as, on every driver's servers. */
export const REPLICATION_ROLE = 'pgcloud_replication';

/** Everything a driver needs to make one database's server. */
export interface ServerSpec {
  /** The platform_service_id (`srv_...`): names the server for the database's whole life. */
  serverId: string;
  /** The port the server listens on, allocated by the provisioner from its range. */
  port: number;
  /** The application database and its login role carry this name (decisions.md section 5). */
  databaseName: string;
  /** The login role's password; reaches the server only as a SCRAM verifier. */
  password: string;
  /** The password of the replication role (`pgcloud_replication`) later issues use. */
  replicationPassword: string;
  config: DatabaseConfig;
}

/** Where clients reach a server. */
export interface ServerEndpoint {
  host: string;
  port: number;
}

/** What a driver finds when it looks at a server (by connecting, not by trusting pg_ctl). */
export type ServerState = 'running' | 'stopped' | 'missing';

/**
 * The platform that runs PostgreSQL servers: `local` (clusters on this host) today,
 * `kubernetes` later. Every method is idempotent, so a job retried after a crash can
 * call it again.
 */
export abstract class DatabaseDriver {
  /** Gets the platform ready at start (for local: the template cluster and the CA). */
  abstract prepare(): Promise<void>;

  /** Makes and starts the server, or finishes an earlier attempt at it. */
  abstract create(spec: ServerSpec): Promise<ServerEndpoint>;

  /** Starts the server when it is not running. */
  abstract ensureRunning(serverId: string): Promise<ServerEndpoint>;

  /** Whether the server answers, is stopped, or does not exist. */
  abstract state(serverId: string): Promise<ServerState>;

  /** Stops the server and removes its data; nothing when it does not exist. */
  abstract destroy(serverId: string): Promise<void>;

  /** Bytes the server's databases take (what the `storage` limit is checked against). */
  abstract usedBytes(serverId: string): Promise<number>;

  /**
   * Makes every new transaction read-only (or writable again), for all sessions, without a
   * restart: how a server at its storage limit stops growing (and a restore keeps it still).
   */
  abstract setReadOnly(serverId: string, readOnly: boolean): Promise<void>;

  /** The ids of every server this driver has, for reconciling against the records. */
  abstract list(): Promise<string[]>;

  /** The deployment's CA certificate (PEM) that issued the servers' certificates. */
  abstract caCertificate(): Promise<string>;
}
