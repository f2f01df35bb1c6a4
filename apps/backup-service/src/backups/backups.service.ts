import { Injectable, Logger } from '@nestjs/common';
import type {
  ArchiveBackup,
  Backup,
  BackupRef,
  CreatedBackup,
  CreatedRestore,
  Database,
  DatabaseRef,
  Deleted,
  DownloadLink,
  RequestContext,
  CreateRestoreRequest,
  RestoreDryRun,
  RestoreOptions,
  RestorePlan,
} from '@pgcloud/contracts';
import { DATABASE_PATTERNS, DomainError, RESTORE_PATTERNS, isId, newId } from '@pgcloud/contracts';
import { RpcClient, assertTierQuota, assertTimeLeft, requireUser } from '@pgcloud/messaging';
import { ObjectStore } from '@pgcloud/storage';
import { BackupServiceConfig } from '../config.js';
import { AutomatedExpiry } from '../schedule/automated-expiry.js';
import { BACKUP_BEGINS } from './backup-lifecycle.js';
import type { BackupEntity } from './backup.entity.js';
import { BackupJobs } from './backup.jobs.js';
import { baseBackupKey, downloadFileName, toArchiveBackup, toBackup } from './backup-object.js';
import { BackupRemoval } from './backup-removal.js';
import { BackupsRepository } from './backups.repository.js';

// A restore attempt fetches the archive at once; a retry asks for a new link.
const RESTORE_LINK_SECONDS = 3600;

/** The backups of a database: list, take, show, download, delete (docs/api/backups.md). */
@Injectable()
export class BackupsService {
  private readonly logger = new Logger(BackupsService.name);

  constructor(
    private readonly rpc: RpcClient,
    private readonly backups: BackupsRepository,
    private readonly jobs: BackupJobs,
    private readonly removal: BackupRemoval,
    private readonly store: ObjectStore,
    private readonly expiry: AutomatedExpiry,
    private readonly config: BackupServiceConfig,
  ) {}

  async list(ctx: RequestContext, ref: DatabaseRef): Promise<{ backups: Backup[] }> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    const rows = await this.backups.listNewestFirst(database.id);
    return { backups: rows.map(toBackup) };
  }

  /** A manual backup: answered `pending` at once, taken by a job. */
  async create(ctx: RequestContext, ref: DatabaseRef): Promise<CreatedBackup> {
    const ownerId = requireUser(ctx);
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    // Quota (403) before state (409), docs/api/backups.md; insert counts again under a
    // lock.
    this.assertQuota(ctx, await this.backups.countKeptManual(database.id));
    assertRunning(database);
    const record = await this.insert(ctx, database, ownerId, { type: 'manual' });
    this.jobs.wake();
    return {
      id: record.id,
      type: record.type,
      status: record.status,
      created_at: record.createdAt.toISOString(),
    };
  }

  /**
   * For pitr-worker, on behalf of the owner: a base backup for PITR's archive, `automated`
   * with no schedule slot, expiring like the schedule's by the owner's tier.
   */
  async takeBase(ctx: RequestContext, ref: DatabaseRef): Promise<{ backup_id: string }> {
    const ownerId = requireUser(ctx);
    const database = await this.runningDatabase(ctx, ref);
    const now = Date.now();
    const expiresAt = await this.expiry.forOwners(ctx, [ownerId], now);
    const record = await this.insert(ctx, database, ownerId, {
      type: 'automated',
      scheduleSlot: null,
      expiresAt: expiresAt(ownerId),
    });
    this.jobs.wake();
    return { backup_id: record.id };
  }

  /** For pitr-worker: every backup of a database, whatever its status, oldest first. */
  async forArchive(databaseId: string): Promise<{ backups: ArchiveBackup[] }> {
    const rows = await this.backups.listOldestFirst(databaseId);
    return { backups: rows.map(toArchiveBackup) };
  }

  async get(ctx: RequestContext, ref: BackupRef): Promise<Backup> {
    return toBackup(await this.findOwned(ctx, ref));
  }

  /** A pre-signed GET of the object; the link itself is never logged. */
  async download(ctx: RequestContext, ref: BackupRef): Promise<DownloadLink> {
    const record = await this.findOwned(ctx, ref);
    assertCompleted(record, 'downloaded');
    const ttl = this.config.DOWNLOAD_URL_TTL_SECONDS;
    const expiresAt = new Date(Date.now() + ttl * 1000);
    const url = await this.store.presignedGet(record.objectKey, {
      expiresInSeconds: ttl,
      downloadFileName: downloadFileName(record.databaseName, record.id),
    });
    this.logger.log(`download link for backup ${record.id} issued`);
    return { download_url: url, expires_at: expiresAt.toISOString() };
  }

  /** Checks the backup, then hands the restore to the provisioner, which runs and records it. */
  async restore(
    ctx: RequestContext,
    ref: BackupRef,
    options: RestoreOptions,
  ): Promise<CreatedRestore> {
    const record = await this.findOwned(ctx, ref);
    assertCompleted(record, 'restored');
    return this.rpc.call(RESTORE_PATTERNS.create, ctx, restoreRequest(ref, record, options));
  }

  /** A dry run of restore: the same checks (the provisioner's too), and what it would do. */
  async planRestore(
    ctx: RequestContext,
    ref: BackupRef,
    options: RestoreOptions,
  ): Promise<RestoreDryRun> {
    const record = await this.findOwned(ctx, ref);
    assertCompleted(record, 'restored');
    const { estimated_seconds } = await this.rpc.call(RESTORE_PATTERNS.check, ctx, {
      ...restoreRequest(ref, record, options),
      base_backup_size_bytes: record.sizeBytes,
      wal_files: 0,
    });
    return {
      plan: {
        kind: 'backup',
        base_backup_id: record.id,
        base_backup_size_bytes: record.sizeBytes,
        wal_files: 0,
        wal_bytes: 0,
        estimated_seconds,
      },
    };
  }

  /**
   * For the provisioner, as it records a restore and at each attempt: a fresh link to the
   * archive and its checksum. Only for the database the backup was taken of: a restore of
   * another database's backup finds none, whatever its caller asserts. Without a backup id,
   * the database's newest completed backup (what a restore drill restores).
   */
  async restorePlan(backupId: string | undefined, databaseId: string): Promise<RestorePlan> {
    const record =
      backupId === undefined
        ? await this.backups.newestCompleted(databaseId)
        : isId('bkp', backupId)
          ? await this.backups.findOfDatabase(backupId, databaseId)
          : null;
    if (!record)
      throw new DomainError(
        'BACKUP_NOT_FOUND',
        backupId === undefined
          ? 'The database has no completed backup.'
          : `Backup ${backupId} was not found.`,
      );
    assertCompleted(record, 'restored');
    return {
      base_backup_id: record.id,
      base_backup_url: await this.store.presignedGet(record.objectKey, {
        expiresInSeconds: RESTORE_LINK_SECONDS,
      }),
      base_backup_sha256: record.checksumSha256 ?? '',
      base_backup_size_bytes: record.sizeBytes,
    };
  }

  /** Which of these databases have a completed backup (what a drill could restore). */
  async withCompleted(databaseIds: string[]): Promise<{ database_ids: string[] }> {
    return { database_ids: await this.backups.withCompleted(databaseIds) };
  }

  async delete(ctx: RequestContext, ref: BackupRef): Promise<Deleted> {
    const record = await this.findOwned(ctx, ref);
    await this.removal.remove(record.id);
    this.logger.log(`backup ${record.id} deleted`);
    return { id: record.id, deleted: true };
  }

  /** Writes a backup record and its job in one transaction. */
  async insert(
    ctx: RequestContext,
    database: Pick<Database, 'id' | 'project_id' | 'name'>,
    ownerId: string,
    fields: Pick<BackupEntity, 'type'> & Partial<Pick<BackupEntity, 'scheduleSlot' | 'expiresAt'>>,
  ): Promise<BackupEntity> {
    const id = newId('bkp');
    const record = await this.backups.insert(
      {
        id,
        databaseId: database.id,
        projectId: database.project_id,
        ownerId,
        databaseName: database.name,
        ...BACKUP_BEGINS,
        objectKey: baseBackupKey(database.project_id, database.id, id),
        sizeBytes: 0,
        scheduleSlot: null,
        expiresAt: null,
        ...fields,
      },
      (keptManual) => {
        if (keptManual !== undefined) this.assertQuota(ctx, keptManual);
        // Not after the caller has answered 503 (the manual backups' lock may have kept us
        // waiting).
        assertTimeLeft(ctx);
      },
      (tx) => this.jobs.enqueue(tx, id, ctx.requestId),
    );
    this.logger.log(`${record.type} backup ${id} of ${database.id} pending`);
    return record;
  }

  /** The caller's database, which a backup needs running. */
  private async runningDatabase(ctx: RequestContext, ref: DatabaseRef): Promise<Database> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, ref);
    assertRunning(database);
    return database;
  }

  private assertQuota(ctx: RequestContext, kept: number): void {
    assertTierQuota(
      ctx.tier,
      kept,
      this.config.manualBackupLimits,
      'manual backups per database',
      'delete one to take another',
    );
  }

  private async findOwned(ctx: RequestContext, ref: BackupRef): Promise<BackupEntity> {
    const database = await this.rpc.call(DATABASE_PATTERNS.get, ctx, {
      project_id: ref.project_id,
      name: ref.name,
    });
    const record = isId('bkp', ref.backup_id)
      ? await this.backups.findOfDatabase(ref.backup_id, database.id)
      : null;
    if (!record)
      throw new DomainError('BACKUP_NOT_FOUND', `Backup ${ref.backup_id} was not found.`);
    return record;
  }
}

function assertRunning(database: Database): void {
  if (database.status !== 'running') {
    throw new DomainError(
      'DATABASE_NOT_READY',
      `Database ${database.name} is ${database.status}; a backup needs it running.`,
    );
  }
}

function assertCompleted(record: BackupEntity, verb: string): void {
  if (record.status !== 'completed')
    throw new DomainError(
      'BACKUP_NOT_READY',
      `Backup ${record.id} is ${record.status}; only a completed backup can be ${verb}.`,
    );
}

/** What the provisioner is asked to restore from a backup, for real or as a dry run. */
function restoreRequest(
  ref: BackupRef,
  record: BackupEntity,
  options: RestoreOptions,
): CreateRestoreRequest {
  return {
    project_id: ref.project_id,
    name: ref.name,
    kind: 'backup',
    backup_id: record.id,
    ...(options.target_database === undefined ? {} : { target_database: options.target_database }),
  };
}
