import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import type {
  BackupSource,
  ConnectionDetails,
  CreateDatabaseRequest,
  Database,
  DatabaseConfig,
  DatabaseRef,
  Deleted,
  RequestContext,
  RunningDatabase,
} from '@pgcloud/contracts';
import {
  DATABASE_EVENTS,
  DomainError,
  PROJECT_PATTERNS,
  isDatabaseName,
  newId,
} from '@pgcloud/contracts';
import { Outbox, RpcClient, assertTimeLeft, requireUser } from '@pgcloud/messaging';
import { isUniqueViolation } from '@pgcloud/postgres';
import { DatabaseDriver, REPLICATION_ROLE } from '../drivers/database-driver.js';
import { DiskWatermark } from '../storage/disk-watermark.js';
import { ProvisionerConfig } from '../config.js';
import { SecretBox } from '@pgcloud/config';
import {
  newPassword,
  openCredentials,
  sealCredentials,
  sealPassword,
} from '../credentials/sealed-credentials.js';
import type { DatabaseEntity } from './database.entity.js';
import { DatabaseJobs } from './database.jobs.js';
import type { Transaction } from './databases.repository.js';
import { DatabasesRepository } from './databases.repository.js';
import { allocatePort } from './port-allocator.js';
import { DEFAULT_CONFIG, assertWithinTier, freeTierLimits } from './tier-limits.js';
import type { NewDatabaseFields } from './database-view.js';
import { toDatabase } from './database-view.js';
import { assertExpiryWithinTier, requestedExpiry } from './expiry.js';

/** Databases of a project: create, show, connect, delete (docs/api/databases.md). */
// How long a rotation tries for its server's lock before answering OPERATION_IN_PROGRESS.
const LOCK_TRIES_MS = 5000;

@Injectable()
export class DatabasesService {
  private readonly logger = new Logger(DatabasesService.name);

  constructor(
    private readonly rpc: RpcClient,
    private readonly databases: DatabasesRepository,
    private readonly jobs: DatabaseJobs,
    private readonly secrets: SecretBox,
    private readonly driver: DatabaseDriver,
    private readonly outbox: Outbox,
    private readonly watermark: DiskWatermark,
    private readonly config: ProvisionerConfig,
  ) {}

  async create(ctx: RequestContext, request: CreateDatabaseRequest): Promise<Database> {
    const ownerId = requireUser(ctx);
    // Validation (400) before existence (404): the region list does not depend on the project.
    const regions = (await this.rpc.call(PROJECT_PATTERNS.regions, ctx, {})).regions;
    const region = request.region;
    if (region !== undefined && !regions.some((r) => r.id === region)) {
      throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
        {
          field: 'region',
          message: `region must be one of: ${regions.map((r) => r.id).join(', ')}`,
        },
      ]);
    }
    const now = Date.now();
    const expiresAt = requestedExpiry(request.expires_at, now);
    const project = await this.rpc.call(PROJECT_PATTERNS.check, ctx, { id: request.project_id });
    const config: DatabaseConfig = { ...DEFAULT_CONFIG, ...request.config };
    assertWithinTier(ctx.tier, config, 0, this.freeLimits()); // config first, count under the lock
    assertExpiryWithinTier(ctx.tier, expiresAt, now);
    const record = await this.insert(
      ctx,
      {
        ownerId,
        projectId: project.id,
        name: request.name,
        region: region ?? project.default_region,
        config,
        expiresAt,
      },
      'provisioning',
      async (tx, inserted) => {
        await this.jobs.enqueueProvision(tx, inserted.id, ctx.requestId);
        await this.jobs.announce(tx, ctx, inserted);
      },
    );
    this.logger.log(`database ${record.id} (${record.platformServiceId}) provisioning`);
    this.jobs.wake();
    return toDatabase(record);
  }

  async list(ctx: RequestContext, projectId: string): Promise<{ databases: Database[] }> {
    const project = await this.rpc.call(PROJECT_PATTERNS.check, ctx, { id: projectId });
    const rows = await this.databases.listInProject(project.id);
    return { databases: rows.map(toDatabase) };
  }

  async get(ctx: RequestContext, ref: DatabaseRef): Promise<Database> {
    return toDatabase(await this.findOwned(ctx, ref));
  }

  async url(ctx: RequestContext, ref: DatabaseRef): Promise<ConnectionDetails> {
    const record = await this.findOwned(ctx, ref);
    if (record.status !== 'running') {
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${record.name} is ${record.status}, not running.`,
      );
    }
    const credentials = await this.databases.credentialsOf(record.id);
    const { password } = openCredentials(this.secrets, credentials);
    const host = serverHost(record);
    const url = new URL(`postgresql://${host}:${record.port}/${record.name}?sslmode=require`);
    url.username = record.name;
    url.password = password;
    return {
      host,
      port: record.port,
      database: record.name,
      user: record.name,
      connection_string: url.toString(),
    };
  }

  /**
   * A new password for the login role (docs/api/databases.md#credentials): stored sealed
   * and set on the server in one transaction, under the server's lock, so a failure leaves
   * the old one in both; new sessions with the old one are refused from the answer on.
   */
  async rotateCredentials(ctx: RequestContext, ref: DatabaseRef): Promise<ConnectionDetails> {
    const record = await this.findOwned(ctx, ref);
    const password = newPassword();
    // Reconcile holds the server's lock for moments; a restore or a removal for long, and
    // the answer must not come after the caller gave up: a few seconds' tries at most.
    const rotated = await this.retryLock(record.platformServiceId, () =>
      this.databases.transaction(async (tx) => {
        const current = await this.databases.lockForUpdate(tx, record.id);
        if (current?.status !== 'running')
          throw new DomainError(
            'DATABASE_NOT_READY',
            `Database ${record.name} is ${current?.status ?? 'gone'}, not running.`,
          );
        // A fenced server is held as for a restore: it takes no write, a new password none.
        if (current.storageFencedAt)
          throw new DomainError(
            'DATABASE_NOT_READY',
            `Database ${record.name} is fenced over its storage limit; rotate once it is not.`,
          );
        await this.databases.replacePassword(
          tx,
          record.id,
          sealPassword(this.secrets, record.id, password),
        );
        await this.outbox.add(tx, DATABASE_EVENTS.credentialsRotated, ctx, {
          database_id: record.id,
          project_id: record.projectId,
        });
        // Last: should the server refuse it, nothing above is kept.
        await this.driver.setLoginPassword(record.platformServiceId, record.name, password);
        return true;
      }),
    );
    if (!rotated)
      throw new DomainError(
        'OPERATION_IN_PROGRESS',
        `Database ${record.name} is busy with other work on its server; try again shortly.`,
      );
    this.logger.log(`database ${record.id}: login password rotated`);
    return this.url(ctx, ref);
  }

  /** tryWithServerLock, tried every 200 ms for LOCK_TRIES_MS; undefined when never taken. */
  private async retryLock<T>(serverId: string, work: () => Promise<T>): Promise<T | undefined> {
    const deadline = Date.now() + LOCK_TRIES_MS;
    for (;;) {
      const done = await this.jobs.tryWithServerLock(serverId, async () => ({
        value: await work(),
      }));
      if (done) return done.value;
      if (Date.now() > deadline) return undefined;
      await sleep(200);
    }
  }

  async delete(ctx: RequestContext, ref: DatabaseRef): Promise<Deleted> {
    const record = await this.findOwned(ctx, ref);
    await this.jobs.scheduleRemoval(ctx, [record.id]);
    return { id: record.id, deleted: true };
  }

  /**
   * For pitr-worker: a restore point written by the database's running server
   * (pg_create_restore_point); its WAL position.
   */
  async createRestorePoint(
    ctx: RequestContext,
    ref: DatabaseRef,
    pointName: string,
  ): Promise<{ lsn: string }> {
    const record = await this.findOwned(ctx, ref);
    if (record.status !== 'running')
      throw new DomainError(
        'DATABASE_NOT_READY',
        `Database ${record.name} is ${record.status}, not running.`,
      );
    return { lsn: await this.driver.createRestorePoint(record.platformServiceId, pointName) };
  }

  /** For backup-service: how to stream a base backup of a running database. */
  async backupSource(databaseId: string): Promise<BackupSource> {
    const record = await this.databases.find(databaseId);
    if (!record || record.status === 'deleting')
      throw new DomainError('DATABASE_NOT_FOUND', `Database ${databaseId} was not found.`);
    if (record.status !== 'running')
      throw new DomainError('DATABASE_NOT_READY', `Database ${record.name} is ${record.status}.`);
    const credentials = await this.databases.credentialsOf(record.id);
    return {
      database_id: record.id,
      project_id: record.projectId,
      name: record.name,
      host: serverHost(record),
      port: record.port,
      user: REPLICATION_ROLE,
      password: openCredentials(this.secrets, credentials).replicationPassword,
      ca_pem: await this.driver.caCertificate(),
    };
  }

  /** For schedules: every running database, oldest first. */
  async running(): Promise<{ databases: RunningDatabase[] }> {
    const rows = await this.databases.running();
    return {
      databases: rows.map((row) => ({
        database_id: row.id,
        project_id: row.projectId,
        owner_id: row.ownerId,
        name: row.name,
      })),
    };
  }

  /**
   * Writes a new database (with its credentials and a port) under the project's quota,
   * and whatever `within` adds, in one transaction: a provisioning job, or a restore.
   * Checks in the API's order: quota (403), name (409), then room for a server (a port,
   * and the disk's watermark: 503); a refused create writes nothing.
   */
  async insert(
    ctx: RequestContext,
    fields: NewDatabaseFields,
    status: 'provisioning' | 'restoring',
    within: (tx: Transaction, record: DatabaseEntity) => Promise<void>,
  ): Promise<DatabaseEntity> {
    for (let attempt = 0; ; attempt++) {
      let port: number | undefined;
      try {
        const id = await this.databases.transaction(async (tx) => {
          await this.takeProjectTurn(tx, fields.projectId);
          await this.assertWithinQuota(tx, ctx, fields);
          await this.assertNameFree(tx, fields);
          port = await this.freePort(tx);
          await this.assertDiskRoom();
          // Not after the caller has answered 503 (the lock above may have kept us waiting).
          assertTimeLeft(ctx);
          const record = await this.write(tx, ctx, { ...fields, status, port });
          await within(tx, record);
          return record.id;
        });
        return this.databases.get(id);
      } catch (err) {
        // Only a create in another project taking the same port meanwhile is tried again.
        const portTaken =
          isUniqueViolation(err) &&
          (err as { constraint?: string }).constraint === 'databases_port_key';
        if (!portTaken || attempt >= 5) throw err;
        this.logger.debug(`port ${port} was taken meanwhile; trying another`);
      }
    }
  }

  /**
   * Creates in one project take turns, so two at once cannot both pass the quota; and none
   * commits after the project's databases were removed for its delete.
   */
  private async takeProjectTurn(tx: Transaction, projectId: string): Promise<void> {
    await this.databases.lockProject(tx, projectId);
    if (await this.databases.projectDeleted(tx, projectId))
      throw new DomainError('PROJECT_NOT_FOUND', `Project ${projectId} was not found.`);
  }

  /** QUOTA_EXCEEDED when the project has as many databases as its tier allows. */
  private async assertWithinQuota(
    tx: Transaction,
    ctx: RequestContext,
    fields: Pick<DatabaseEntity, 'projectId' | 'config'>,
  ): Promise<void> {
    const inProject = await this.databases.countInProject(tx, fields.projectId);
    assertWithinTier(ctx.tier, fields.config, inProject, this.freeLimits());
  }

  private async assertNameFree(
    tx: Transaction,
    fields: Pick<DatabaseEntity, 'projectId' | 'name'>,
  ): Promise<void> {
    if (await this.databases.nameTaken(tx, fields.projectId, fields.name))
      throw new DomainError(
        'DATABASE_NAME_TAKEN',
        `The project already has a database named "${fields.name}".`,
      );
  }

  /** A port of the range for a new server; SERVICE_UNAVAILABLE when none is left. */
  private async freePort(tx: Transaction): Promise<number> {
    const port = await allocatePort(
      this.config.portRange,
      await this.databases.usedPorts(tx),
      this.config.DATABASE_LISTEN_ADDRESS,
    );
    if (port === undefined) {
      this.logger.warn(`no free port left in ${this.config.DATABASE_PORT_RANGE}`);
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'This deployment has no room for another database server right now; try again later.',
      );
    }
    return port;
  }

  /** The record, its sealed credentials and its `database.created` event. */
  private async write(
    tx: Transaction,
    ctx: RequestContext,
    fields: NewDatabaseFields & Pick<DatabaseEntity, 'status' | 'port'>,
  ): Promise<DatabaseEntity> {
    const record = this.databases.create({
      ...fields,
      id: newId('db'),
      platformServiceId: newId('srv'),
      host: null,
      error: null,
    });
    const credentials = sealCredentials(this.secrets, record.id, {
      password: newPassword(),
      replicationPassword: newPassword(),
    });
    await this.databases.insert(tx, record, credentials);
    await this.outbox.add(tx, DATABASE_EVENTS.created, ctx, {
      database_id: record.id,
      project_id: record.projectId,
    });
    return record;
  }

  /** SERVICE_UNAVAILABLE when the disk servers share is under its watermark. */
  private async assertDiskRoom(): Promise<void> {
    const freePercent = await this.watermark.shortOfRoom();
    if (freePercent === undefined) return;
    this.logger.warn(
      `DATA_DIR has ${freePercent.toFixed(1)}% free, under DATA_DIR_MIN_FREE_PERCENT: no new server`,
    );
    throw new DomainError(
      'SERVICE_UNAVAILABLE',
      'This deployment has no room for another database server right now; try again later.',
    );
  }

  /** The caller's database (any status but deleting), or PROJECT_/DATABASE_NOT_FOUND. */
  async findOwned(ctx: RequestContext, ref: DatabaseRef): Promise<DatabaseEntity> {
    const project = await this.rpc.call(PROJECT_PATTERNS.check, ctx, { id: ref.project_id });
    const notFound = new DomainError('DATABASE_NOT_FOUND', `Database ${ref.name} was not found.`);
    // A name that breaks the name rules names nothing, and never reaches SQL (where a NUL
    // in it was an error, 500, instead of an answer).
    if (!isDatabaseName(ref.name)) throw notFound;
    const record = await this.databases.findByName(project.id, ref.name);
    if (!record) throw notFound;
    return record;
  }

  private freeLimits() {
    return freeTierLimits(this.config);
  }
}

/** Where a running database's server answers: set by its driver when it was made. */
function serverHost(record: DatabaseEntity): string {
  if (record.host === null) throw new Error(`database ${record.id} has no host recorded`);
  return record.host;
}
