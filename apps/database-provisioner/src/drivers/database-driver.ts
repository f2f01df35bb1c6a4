import type { DatabaseConfig } from '@pgcloud/contracts';

/** The role base backups and WAL streaming log in as, on every driver's servers. */
export const REPLICATION_ROLE = 'pgcloud_replication';

/** Everything a driver needs to make one database's server. */
export interface ServerSpec {
  /** The platform_service_id (`srv_...`): names the server for the database's whole life. */
  serverId: string;
  /** The port the server listens on, allocated by the provisioner from its range. */
  port: number;
  /** The database's region: where a platform with places puts the server. */
  region: string;
  /** The application database and its login role carry this name (docs/api/databases.md). */
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

/** The base backup a restore is built from: a link that downloads it, and its SHA-256. */
export interface RestoreArchive {
  url: string;
  sha256: string;
}

/**
 * A WAL segment a point-in-time restore replays: its file name and links to its bytes, in
 * order (one object, or the pieces the archive uploaded it in as it grew).
 */
export interface RestoreSegment {
  name: string;
  urls: string[];
  /** The segment still being written when it was archived: shorter than 16 MiB. */
  partial: boolean;
  /** The bytes the archive vouches for: the download must hold at least these. */
  sizeBytes: number;
}

/**
 * Where replay stops (docs/api/pitr.md#restoring), inclusive: every transaction committed
 * at or before a time (ISO 8601, UTC); through the record at a WAL position
 * (`X/XXXXXXXX`); or at a named restore point.
 */
export type RecoveryTarget = { time: string } | { lsn: string } | { restorePoint: string };

/** Replay beyond the base backup: the archived segments, up to a target. */
export interface RestoreRecovery {
  segments: RestoreSegment[];
  target: RecoveryTarget;
}

/** Everything a driver needs to restore one server's data from a base backup. */
export interface RestoreSpec {
  serverId: string;
  /** The restore's id: what its checked data is marked with, so a retry knows its own. */
  restoreId: string;
  archive: RestoreArchive;
  /** Point-in-time restores only: without it, recovery stops at the end of the backup. */
  recovery?: RestoreRecovery;
  /** The application database's (and login role's) name inside the archive. */
  archivedDatabaseName: string;
  /** The name it carries after the restore (another one when restoring into a new database). */
  databaseName: string;
  /** The credentials the restored server must accept: the database's own, as stored. */
  password: string;
  replicationPassword: string;
  /** Aborted when the job lost its lease or its server lock: downloads and tools stop. */
  signal?: AbortSignal;
  /**
   * A new database's server, still being made while the build downloads: the build uses
   * the server's own files (settings, certificate) only once this has resolved.
   */
  serverMade?: Promise<unknown>;
  /** Told how the build moves on, as it does. */
  progress?: RestoreBuildProgress;
}

/** How a build reports where it is: cheap calls, never awaited, that must not throw. */
export interface RestoreBuildProgress {
  /** A step of the build begins. */
  step: (step: RestoreBuildStep) => void;
  /** The base backup's bytes downloaded so far, as they stream. */
  downloaded: (bytes: number) => void;
  /** Point-in-time restores: the planned WAL segments replayed so far, as recovery goes. */
  replayed?: (segments: number) => void;
}

/** The steps of building a restore, in order, as a driver times them (see buildRestore). */
export type RestoreBuildStep = 'download' | 'recover' | 'check';

/** What a built restore replayed, and how long its steps took. */
export interface RestoreOutcome {
  /** WAL segments replayed, from the backup's start to where recovery stopped. */
  walFilesApplied: number;
  /**
   * Seconds each step took; together, the whole build. `download`: the base backup
   * fetched, verified and laid out (the WAL to replay starts coming down meanwhile);
   * `recover`: recovery, as the rest of the WAL comes in, and promotion; `check`: the
   * names, passwords and TLS login checked, and the data marked as checked.
   */
  stepSeconds: Record<RestoreBuildStep, number>;
}

/** The archive is not the backup it claims to be (checksum, format): retrying cannot help. */
export class CorruptArchiveError extends Error {
  override name = 'CorruptArchiveError';
}

/** What a driver finds when it looks at a server (by connecting, not by trusting pg_ctl). */
export type ServerState = 'running' | 'stopped' | 'missing';

/**
 * The platform that runs PostgreSQL servers: `local` (clusters on this host) or
 * `kubernetes` (CloudNativePG Clusters). Every method is idempotent, so a job retried after a crash can
 * call it again.
 */
export abstract class DatabaseDriver {
  /** Gets the platform ready at start (for local: the template cluster and the CA). */
  abstract prepare(): Promise<void>;

  /**
   * Makes and starts the server, or finishes an earlier attempt at it. `signal` (a job that
   * lost its lease or its server lock) stops it between steps and kills the tool running.
   */
  abstract create(spec: ServerSpec, signal?: AbortSignal): Promise<ServerEndpoint>;

  /** Starts the server when it is not running. */
  abstract ensureRunning(serverId: string): Promise<ServerEndpoint>;

  /** Whether the server answers, is stopped, or does not exist. */
  abstract state(serverId: string): Promise<ServerState>;

  /** Stops the server and removes its data; nothing when it does not exist. */
  abstract destroy(serverId: string): Promise<void>;

  /**
   * A server with no record: stopped and set aside whole, never deleted at once (the
   * records may be the wrong ones). Answers where it went, for the log.
   */
  abstract quarantine(serverId: string): Promise<string>;

  /** Deletes the servers quarantined before `before`; answers their ids. */
  abstract purgeQuarantined(before: Date): Promise<string[]>;

  /** Bytes the server's databases take (what the `storage` limit is checked against). */
  abstract usedBytes(serverId: string): Promise<number>;

  /**
   * Makes every new transaction read-only (or writable again), for all sessions, without a
   * restart: how a server at its storage limit stops growing (enforceLimits keeps its
   * owner from lifting it). A restore needs more: holdForRestore.
   */
  abstract setReadOnly(serverId: string, readOnly: boolean): Promise<void>;

  /**
   * True when the servers share one disk (the local driver's DATA_DIR): one that grows past
   * its limit by the grace is then fenced, so it cannot fill the disk under the others. A
   * server on a volume of its own (kubernetes) meets that volume's size instead.
   */
  abstract readonly sharesDisk: boolean;

  /** The shared disk's room, when servers share one (sharesDisk); undefined otherwise. */
  diskSpace(): Promise<{ freeBytes: number; totalBytes: number } | undefined> {
    return Promise.resolve(undefined);
  }

  /**
   * The storage fence: the server held as for a restore (holdForRestore), reads going on
   * and no write of any kind, until a restore opens it again (finishRestore).
   */
  fence(serverId: string): Promise<void> {
    return this.holdForRestore(serverId);
  }

  /**
   * Lifts the fence for a cleanup window: the server runs writable again on its own
   * timeline, as after a restore that gave up (its sessions drop once); nothing when it
   * is not held.
   */
  abstract unfence(serverId: string): Promise<void>;

  /** Writes a named restore point into the server's WAL; its position (`X/XXXXXXXX`). */
  abstract createRestorePoint(serverId: string, name: string): Promise<string>;

  /**
   * Keeps a server within its limits whatever its owner set inside it: resets database-
   * and role-level settings that would lift the storage limit's read-only mode (and, when
   * `atLimit`, ends the sessions that started writable under them), and caps temp files
   * at the storage size (temp_file_limit). Answers what it changed.
   */
  abstract enforceLimits(
    serverId: string,
    limits: { databaseName: string; storageGib: number; atLimit: boolean },
  ): Promise<string[]>;

  /**
   * Before an in-place restore: the live server is put on hold, read-only in a way no
   * client can lift (`BEGIN READ WRITE`, session and database settings included), so no
   * write is accepted and then lost by the swap. Reads go on; sessions are dropped once.
   * Starts the server if it was stopped; nothing when it is held already.
   */
  abstract holdForRestore(serverId: string): Promise<void>;

  /**
   * Restore, step 1: builds the restored data beside the live data (download with its
   * checksum verified, recovery to the end of the backup or, with `spec.recovery`, through
   * the archived WAL to the target time, promotion, the names and passwords of `spec`)
   * and checks it: a server on it starts and accepts a TLS login.
   * The live server keeps running meanwhile. Starts afresh when called again.
   */
  abstract buildRestore(spec: RestoreSpec): Promise<RestoreOutcome>;

  /**
   * Restore, step 2: stops the live server and starts the built data in its place, with
   * the same port and certificate, on hold until finishRestore; the old data is kept until
   * then. After a crash, calling it again finishes an interrupted swap.
   */
  abstract swapInRestore(serverId: string, restoreId: string): Promise<ServerEndpoint>;

  /** Whether restored data has been swapped in and the old data is still kept. */
  abstract restoreSwapped(serverId: string, restoreId: string): Promise<boolean>;

  /** Restore, step 3: the swap is checked; the old data goes and the hold ends. */
  abstract finishRestore(serverId: string): Promise<void>;

  /**
   * A restore that will not finish: the built data goes and, if it was swapped in, the
   * old data comes back; the server runs off hold, on its old data.
   */
  abstract abandonRestore(serverId: string): Promise<void>;

  /** The ids of every server this driver has, for reconciling against the records. */
  abstract list(): Promise<string[]>;

  /** The deployment's CA certificate (PEM) that issued the servers' certificates. */
  abstract caCertificate(): Promise<string>;
}
