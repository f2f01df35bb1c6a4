import type { DatabaseConfig, DrillCheck } from '@pgcloud/contracts';

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

/** The live server a branch is copied from (docs/api/databases.md#branches). */
export interface BranchSource {
  serverId: string;
  /** The source's application database and login role: the copy takes the branch's names. */
  databaseName: string;
}

/** A branch's server, made and running: where it answers, and the point it was copied at. */
export interface BranchOutcome {
  endpoint: ServerEndpoint;
  /** The WAL position the copy holds everything up to (`X/XXXXXXXX`). */
  lsn: string;
  /** When the copy reached that point. */
  at: Date;
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
  /**
   * Per link, the ETag the object store answered when the archive stored it: where it is
   * an MD5 (a single upload), the downloaded bytes must have it.
   */
  etags?: (string | null)[];
  /** Stored zstd-compressed, as one object (a completed segment only). */
  compression?: 'zstd';
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
  /**
   * Where the restored data's history ends (docs/api/databases.md#branches): the WAL
   * position its new timeline starts at, and the commit time of the last transaction it
   * replayed (null when it replayed none).
   */
  copiedPoint?: CopiedPoint;
}

/** The point a restore or a branch copied its source at. */
export interface CopiedPoint {
  lsn: string;
  at: string | null;
}

/** What a restore drill restores (docs/api/drills.md): a backup, and with PITR the WAL after it. */
export interface DrillSpec {
  drillId: string;
  /** The database's server: a platform with places runs the scratch server where it runs. */
  serverId: string;
  archive: RestoreArchive;
  /** With PITR: the archived WAL, replayed to a recent point. */
  recovery?: RestoreRecovery;
  /** The application database's (and login role's) name inside the archive. */
  archivedDatabaseName: string;
  /** Aborted when the job lost its lease: downloads, tools and the scratch server stop. */
  signal?: AbortSignal;
  progress?: RestoreBuildProgress;
}

/** What a drill found. */
export interface DrillOutcome {
  /** The checks run, in order; the drill passed when there is no failed one. */
  checks: DrillCheck[];
  /** Seconds from the download's start to a checked login (0 when it got nowhere). */
  restoreSeconds: number;
  walFilesApplied: number;
  /** PITR: where replay ended (`X/XXXXXXXX`). */
  replayEnd?: string;
  /** What stopped a restore that failed, in the tools' words: for the log only. */
  cause?: string;
}

/** The archive is not the backup it claims to be (checksum, format): retrying cannot help. */
export class CorruptArchiveError extends Error {
  override name = 'CorruptArchiveError';
}

/**
 * A WAL segment the plan names is not in the object store, or not the bytes the archive
 * stored: replay cannot go through it, and retrying cannot help.
 */
export class BrokenWalError extends Error {
  override name = 'BrokenWalError';
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

  /**
   * Makes a branch's server as a copy of a live one (docs/api/databases.md#branches): a
   * base backup streamed from the source over replication, without stopping it or
   * holding its writes, started on its own port and certificate with the branch's names and
   * passwords. Consistent at the backup's end, the point it answers. Idempotent: called
   * again, it finishes what an earlier attempt began (a partial copy is made again).
   */
  abstract branch(
    spec: ServerSpec,
    source: BranchSource,
    signal?: AbortSignal,
  ): Promise<BranchOutcome>;

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

  /**
   * Gives a running server a new size (docs/api/databases.md#resizing): its settings, and
   * on platforms that have them its resources and volume; restarts it at most once, and
   * answers once it runs with the new size. `unfence`: a fenced server (held as for a
   * restore) comes back writable at that restart. Idempotent: called again, it finishes.
   */
  abstract resize(
    serverId: string,
    config: DatabaseConfig,
    options: { unfence: boolean; signal?: AbortSignal },
  ): Promise<void>;

  /** Whether `branch` copies live servers here (not yet on kubernetes). */
  abstract readonly branchesLive: boolean;

  /** False where a server's volume can only grow (kubernetes): less storage is refused. */
  abstract readonly shrinksStorage: boolean;

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

  /**
   * Gives the login role `databaseName` a new password (as a SCRAM verifier): new sessions
   * with the old one are refused once this answers; open sessions go on.
   */
  abstract setLoginPassword(
    serverId: string,
    databaseName: string,
    password: string,
  ): Promise<void>;

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

  /**
   * A restore drill: the archive restored into a scratch server no client can reach (a
   * directory of its own on this host; on Kubernetes, a restore Job whose data is thrown
   * away), checked (drill-checks.ts), and removed, whatever happened. Starts afresh when
   * called again.
   */
  abstract drill(spec: DrillSpec): Promise<DrillOutcome>;

  /**
   * Removes a drill's scratch server and data, left by a crash in the middle of it;
   * nothing when there is none.
   */
  abstract discardDrill(drillId: string, serverId: string): Promise<void>;

  /** The ids of every server this driver has, for reconciling against the records. */
  abstract list(): Promise<string[]>;

  /** The deployment's CA certificate (PEM) that issued the servers' certificates. */
  abstract caCertificate(): Promise<string>;
}
