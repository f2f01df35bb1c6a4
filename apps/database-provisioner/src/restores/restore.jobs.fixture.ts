/*
 * The world RestoreJobs' unit specs run in: its tables (under the real repositories), lock,
 * driver, RPC peers and outbox in memory. Used by *.spec.ts only.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Logger } from '@nestjs/common';
import { BACKUP_PATTERNS, PITR_PATTERNS } from '@pgcloud/contracts';
import type { EventDef, RequestContext, RestorePlan } from '@pgcloud/contracts';
import type { FailedJob, Job, JobFailure } from '@pgcloud/jobs';
import { PermanentJobError } from '@pgcloud/jobs';
import type { Outbox } from '@pgcloud/messaging';
import { answer, fakeRpcClient } from '@pgcloud/testing';
import pg from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { FindOperator } from 'typeorm';
import type { ProvisionerConfig } from '../config.js';
import type { SecretBox } from '@pgcloud/config';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { CredentialsEntity } from '../databases/database.entity.js';
import type { DatabaseJobs } from '../databases/database.jobs.js';
import { DatabasesRepository } from '../databases/databases.repository.js';
import type { DatabaseDriver, RestoreSpec, ServerSpec } from '../drivers/database-driver.js';
import { RestoreEntity } from './restore.entity.js';
import { RestoreJobs } from './restore.jobs.js';
import { RestoresRepository } from './restores.repository.js';

type Payload = { restore_id: string; request_id: string };
type Where = Record<string, unknown>;
/** What the runner was given: the restore job's handler, and onFailed. */
interface RunnerView {
  handlers: Record<string, (job: Job<Payload>) => Promise<void>>;
  settings: {
    onFailed: (job: FailedJob<Payload>, f: JobFailure, m: EntityManager) => Promise<void>;
  };
}

/** TLS logins (pg.Client, faked below) succeed, encrypted. */
class FakePgClient {
  on(): void {}
  connect = (): Promise<void> => Promise.resolve();
  query = (sql: string) =>
    Promise.resolve({ rows: [sql.includes('pg_stat_ssl') ? { ssl: true } : {}] });
  end = (): Promise<void> => Promise.resolve();
}

const matches = (row: object, where: Where) =>
  Object.entries(where).every(([k, v]) => satisfies((row as Record<string, unknown>)[k], v));
/** A column's value against a `where` value: equal, or TypeORM's IsNull(), Not() and In(). */
function satisfies(value: unknown, wanted: unknown): boolean {
  if (wanted instanceof FindOperator) {
    if (wanted.type === 'isNull') return value === null || value === undefined;
    if (wanted.type === 'not') return !satisfies(value, wanted.value);
    if (wanted.type === 'in') return (wanted.value as unknown[]).includes(value);
  }
  return value === wanted;
}
export const PLAN: RestorePlan = {
  base_backup_id: 'bkp_k3v9x0q2m8t4b7w1c5zd',
  base_backup_url: 'https://s3/base.tar.zst',
  base_backup_sha256: 'ab'.repeat(32),
  base_backup_size_bytes: 4096,
};
/** How long the driver says the build's steps took, in seconds. */
export const BUILD_STEPS = { download: 30, recover: 20, check: 2 };
export const TARGET_TIME = '2026-11-24T07:00:00.000000Z';

/**
 * The provisioner's tables, the server lock, the driver, backup-service and pitr-worker,
 * and the outbox, in memory; `steps` tells what reached the outside, in order.
 */
export class World {
  databases = new Map<string, DatabaseEntity>();
  restores = new Map<string, RestoreEntity>();
  steps: string[] = [];
  /** The phases the restore's record moved to, in order. */
  phases: string[] = [];
  /** The bytes of the base backup the driver tells as they stream. */
  downloads: number[] = [];
  events: { name: string; payload: Record<string, unknown> }[] = [];
  /** Runs inside the build, after the download (a cancel asked meanwhile, say). */
  duringBuild?: () => void;
  holdsJob = true;
  /** A crash left the restored data swapped in already. */
  swapped = false;
  planError: Error | undefined;
  /** What backup-service and pitr-worker put in their plans besides the usual. */
  planExtra: Partial<RestorePlan> = {};
  /** The new database's server is made once this settles (at once without it). */
  making: Promise<void> | undefined;
  createError: Error | undefined;
  buildError: Error | undefined;
  undoError: Error | undefined;
  built: RestoreSpec | undefined;
  manager = {} as EntityManager;

  addDatabase(id: string, serverId: string, status: DatabaseEntity['status']): void {
    const name = `app_${id}`;
    const record = { id, projectId: 'prj_1', name, platformServiceId: serverId, port: 5433 };
    this.databases.set(id, { ...record, config: {}, status, error: null } as DatabaseEntity);
  }

  /** An in-place restore of db_1 from a backup, or a PITR one into a new database db_2. */
  addRestore(into?: 'db_2', status: RestoreEntity['status'] = 'pending'): RestoreEntity {
    this.addDatabase('db_1', 'srv_1', into ? 'running' : 'restoring');
    if (into) this.addDatabase(into, 'srv_2', 'restoring');
    const restore = Object.assign(new RestoreEntity(), {
      id: 'rst_1',
      databaseId: 'db_1',
      targetDatabaseId: into ?? null,
      kind: into ? 'pitr' : 'backup',
      backupId: into ? null : 'bkp_1',
      targetTime: into ? TARGET_TIME : null,
      targetLsn: null,
      targetRestorePoint: null,
      status,
      walFilesApplied: null,
      downloadSeconds: null,
      replaySeconds: null,
      cancelRequestedAt: null,
      phase: 'queued',
      bytesDone: 0,
      bytesTotal: 0,
      walFilesDone: 0,
      walFilesTotal: 0,
      etaSeconds: null,
      error: null,
    });
    this.restores.set(restore.id, restore);
    return restore;
  }

  jobs(): RestoreJobs {
    const table = (entity: unknown): Map<string, object> =>
      entity === RestoreEntity ? this.restores : this.databases;
    const step = (s: string) => (this.steps.push(s), Promise.resolve());
    const findOneBy = (entity: unknown, where: Where) => {
      const found = [...table(entity).values()].find((r) => matches(r, where));
      return Promise.resolve(found ? { ...found } : null);
    };
    const update = (entity: unknown, where: Where, set: { status?: string; phase?: string }) => {
      const found = [...table(entity).values()].filter((r) => matches(r, where));
      const moved = found.some((r) => set.phase && (r as RestoreEntity).phase !== set.phase);
      if (moved && set.phase) this.phases.push(set.phase);
      for (const row of found) Object.assign(row, set);
      const what = entity === RestoreEntity ? 'restore' : `database ${String(where.id)}`;
      if (set.status) this.steps.push(`${what} ${set.status} (${found.length})`);
      return Promise.resolve({ affected: found.length });
    };
    const manager = (this.manager = {
      // holdJob's SELECT ... FOR UPDATE on the jobs table.
      query: () => Promise.resolve(this.holdsJob ? [{ id: 'job_1' }] : []),
      findOneBy,
      update,
      existsBy: (entity: unknown, where: Where) =>
        Promise.resolve([...table(entity).values()].some((r) => matches(r, where))),
      findOneByOrFail: (entity: unknown, where: { databaseId: string }) =>
        entity === CredentialsEntity
          ? Promise.resolve({ ...where, passwordSealed: 'pw', replicationPasswordSealed: 'rp' })
          : assert.fail(),
    } as unknown as EntityManager);
    const dataSource = {
      manager,
      transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager),
    } as unknown as DataSource;
    const rpc = fakeRpcClient(
      answer(PITR_PATTERNS.pauseForRestore, (p) => step(`pause receiver ${p.database_id}`)),
      answer(BACKUP_PATTERNS.restorePlan, (p) => this.plan(`backup plan ${p.backup_id}`)),
      answer(PITR_PATTERNS.restorePlan, (p) =>
        this.plan(`pitr plan ${p.database_id} ${p.target_time}`, {
          wal_segments: [
            {
              name: '000000010000000000000002',
              urls: ['https://s3/w'],
              partial: true,
              size_bytes: 9,
            },
          ],
          target_time: p.target_time,
        }),
      ),
    );
    const driver = {
      restoreSwapped: () => Promise.resolve(this.swapped),
      create: async (spec: ServerSpec) => {
        this.steps.push(`create ${spec.serverId} ${spec.databaseName}`);
        await this.making;
        if (this.createError) throw this.createError;
        this.steps.push(`made ${spec.serverId}`);
      },
      holdForRestore: (serverId: string) => step(`hold ${serverId}`),
      buildRestore: async (spec: RestoreSpec) => {
        this.built = spec;
        this.steps.push(`build ${spec.serverId}`);
        // A build error comes during the download (a checksum that does not match).
        spec.progress?.step('download');
        for (const bytes of this.downloads) spec.progress?.downloaded(bytes);
        if (this.buildError) throw this.buildError;
        // As the drivers do: the new server's files are used once it is made.
        await spec.serverMade;
        this.duringBuild?.();
        spec.progress?.step('recover');
        spec.progress?.step('check');
        return { walFilesApplied: 7, stepSeconds: BUILD_STEPS };
      },
      swapInRestore: (serverId: string) => (
        this.steps.push(`swap ${serverId}`),
        Promise.resolve({ host: '127.0.0.1', port: 5433 })
      ),
      caCertificate: () => Promise.resolve('ca'),
      finishRestore: (serverId: string) => step(`finish ${serverId}`),
      setReadOnly: (serverId: string, on: boolean) => step(`read-only ${String(on)} ${serverId}`),
      abandonRestore: (serverId: string) =>
        this.undoError ? Promise.reject(this.undoError) : step(`abandon ${serverId}`),
      destroy: (serverId: string) => step(`destroy ${serverId}`),
    } as unknown as DatabaseDriver;
    const databaseJobs = {
      withServerLock: async (serverId: string, work: (s: AbortSignal) => Promise<unknown>) => {
        this.steps.push(`lock ${serverId}`);
        const result = await work(new AbortController().signal);
        this.steps.push(`unlock ${serverId}`);
        return result;
      },
      announce: (_m: unknown, _c: unknown, record: DatabaseEntity) =>
        step(`announce ${record.id} ${record.status}`),
      markForRemoval: (_m: unknown, _c: unknown, ids: string[]) => step(`remove ${ids.join(' ')}`),
    } as unknown as DatabaseJobs;
    const secrets = { open: (sealed: string) => sealed } as unknown as SecretBox;
    const outbox = {
      add: (_m: unknown, def: EventDef<object>, _c: RequestContext, p: Record<string, unknown>) => {
        this.events.push({ name: def.name, payload: p });
        return step(`event ${def.name}`);
      },
    } as unknown as Outbox;
    const config = {
      JOB_LEASE_SECONDS: 30,
      S3_ENDPOINT: 'https://s3',
      RESTORE_PROGRESS_INTERVAL_MS: 1000,
    } as ProvisionerConfig;
    return new RestoreJobs(
      rpc,
      new RestoresRepository(dataSource),
      new DatabasesRepository(dataSource),
      driver,
      secrets,
      databaseJobs,
      outbox,
      config,
    );
  }

  private plan(what: string, extra: Partial<RestorePlan> = {}): Promise<RestorePlan> {
    this.steps.push(what);
    return this.planError
      ? Promise.reject(this.planError)
      : Promise.resolve({ ...PLAN, ...extra, ...this.planExtra });
  }
}

const runnerOf = (jobs: RestoreJobs) => (jobs as unknown as { runner: RunnerView }).runner;
const PAYLOAD: Payload = { restore_id: 'rst_1', request_id: 'req_1' };
export const run = (world: World) =>
  runnerOf(world.jobs()).handlers['database.restore']({
    id: 'job_1',
    type: 'database.restore',
    key: 'rst_1',
    payload: PAYLOAD,
    attempt: 1,
    signal: new AbortController().signal,
  });
export const fail = (world: World, kind: string) =>
  runnerOf(world.jobs()).settings.onFailed(
    { id: 'job_1', type: 'database.restore', key: 'rst_1', payload: PAYLOAD, attempt: 3 },
    { kind, reason: 'pg_ctl: could not start server' },
    world.manager,
  );
export const permanent = (kind: string) => (err: unknown) =>
  err instanceof PermanentJobError && err.kind === kind;

/** Fakes TLS logins (pg.Client) and silences Nest's logger for the describe() it is called in. */
export function fakeTlsLogins(): void {
  const realClient = pg.Client;
  before(() => {
    Logger.overrideLogger(false);
    (pg as { Client: unknown }).Client = FakePgClient;
  });
  after(() => {
    pg.Client = realClient;
  });
}
