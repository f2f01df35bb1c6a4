import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { BACKUP_PATTERNS, DomainError, PITR_PATTERNS } from '@pgcloud/contracts';
import type { EventDef, RequestContext, RestorePlan } from '@pgcloud/contracts';
import type { FailedJob, Job, JobFailure } from '@pgcloud/jobs';
import { PermanentJobError } from '@pgcloud/jobs';
import type { Outbox } from '@pgcloud/messaging';
import { answer, fakeRpcClient } from '@pgcloud/testing';
import pg from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import type { ProvisionerConfig } from '../config.js';
import type { SecretBox } from '../credentials/secret-box.js';
import type { DatabaseEntity } from '../databases/database.entity.js';
import { CredentialsEntity } from '../databases/database.entity.js';
import type { DatabaseJobs } from '../databases/database.jobs.js';
import type { DatabaseDriver, RestoreSpec, ServerSpec } from '../drivers/database-driver.js';
import { CorruptArchiveError } from '../drivers/database-driver.js';
import { RestoreEntity } from './restore.entity.js';
import { RestoreJobs } from './restore.jobs.js';

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
  Object.entries(where).every(([k, v]) => (row as Record<string, unknown>)[k] === v);
const PLAN: RestorePlan = {
  base_backup_url: 'https://s3/base.tar.zst',
  base_backup_sha256: 'ab'.repeat(32),
  base_backup_size_bytes: 4096,
};
const TARGET_TIME = '2026-11-24T07:00:00.000000Z';

/**
 * The provisioner's tables, the server lock, the driver, backup-service and pitr-worker,
 * and the outbox, in memory; `steps` tells what reached the outside, in order.
 */
class World {
  databases = new Map<string, DatabaseEntity>();
  restores = new Map<string, RestoreEntity>();
  steps: string[] = [];
  events: { name: string; payload: Record<string, unknown> }[] = [];
  holdsJob = true;
  /** A crash left the restored data swapped in already. */
  swapped = false;
  planError: Error | undefined;
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
      status,
      walFilesApplied: null,
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
    const update = (entity: unknown, where: Where, set: { status?: string }) => {
      const found = [...table(entity).values()].filter((r) => matches(r, where));
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
    } as unknown as EntityManager);
    const dataSource = {
      manager,
      getRepository: (entity: unknown) => ({
        update: (where: Where, set: { status?: string }) => update(entity, where, set),
        findOneByOrFail: (where: { databaseId: string }) =>
          entity === CredentialsEntity
            ? Promise.resolve({ ...where, passwordSealed: 'pw', replicationPasswordSealed: 'rp' })
            : assert.fail(),
      }),
      transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager),
    } as unknown as DataSource;
    const rpc = fakeRpcClient(
      answer(PITR_PATTERNS.pauseForRestore, (p) => step(`pause receiver ${p.database_id}`)),
      answer(BACKUP_PATTERNS.restorePlan, (p) => this.plan(`backup plan ${p.backup_id}`)),
      answer(PITR_PATTERNS.restorePlan, (p) =>
        this.plan(`pitr plan ${p.database_id} ${p.target_time}`, {
          wal_segments: [
            { name: '000000010000000000000002', url: 'u', partial: true, size_bytes: 9 },
          ],
          target_time: p.target_time,
        }),
      ),
    );
    const driver = {
      restoreSwapped: () => Promise.resolve(this.swapped),
      create: (spec: ServerSpec) => step(`create ${spec.serverId} ${spec.databaseName}`),
      holdForRestore: (serverId: string) => step(`hold ${serverId}`),
      buildRestore: (spec: RestoreSpec) => {
        this.built = spec;
        this.steps.push(`build ${spec.serverId}`);
        return this.buildError
          ? Promise.reject(this.buildError)
          : Promise.resolve({ walFilesApplied: 7 });
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
    } as unknown as DatabaseJobs;
    const secrets = { open: (sealed: string) => sealed } as unknown as SecretBox;
    const outbox = {
      add: (_m: unknown, def: EventDef<object>, _c: RequestContext, p: Record<string, unknown>) => {
        this.events.push({ name: def.name, payload: p });
        return step(`event ${def.name}`);
      },
    } as unknown as Outbox;
    const config = { JOB_LEASE_SECONDS: 30 } as ProvisionerConfig;
    return new RestoreJobs(rpc, dataSource, driver, secrets, databaseJobs, outbox, config);
  }

  private plan(what: string, extra: Partial<RestorePlan> = {}): Promise<RestorePlan> {
    this.steps.push(what);
    return this.planError ? Promise.reject(this.planError) : Promise.resolve({ ...PLAN, ...extra });
  }
}

const runnerOf = (jobs: RestoreJobs) => (jobs as unknown as { runner: RunnerView }).runner;
const PAYLOAD: Payload = { restore_id: 'rst_1', request_id: 'req_1' };
const run = (world: World) =>
  runnerOf(world.jobs()).handlers['database.restore']({
    id: 'job_1',
    type: 'database.restore',
    key: 'rst_1',
    payload: PAYLOAD,
    attempt: 1,
    signal: new AbortController().signal,
  });
const fail = (world: World, kind: string) =>
  runnerOf(world.jobs()).settings.onFailed(
    { id: 'job_1', type: 'database.restore', key: 'rst_1', payload: PAYLOAD, attempt: 3 },
    { kind, reason: 'pg_ctl: could not start server' },
    world.manager,
  );
const permanent = (kind: string) => (err: unknown) =>
  err instanceof PermanentJobError && err.kind === kind;

describe('RestoreJobs', () => {
  const realClient = pg.Client;
  before(() => {
    Logger.overrideLogger(false);
    (pg as { Client: unknown }).Client = FakePgClient;
  });
  after(() => {
    pg.Client = realClient;
  });

  it('restores in place: held, planned by backup-service, receiver paused, built, swapped, finished', async () => {
    const world = new World();
    world.addRestore();

    await run(world);

    assert.deepEqual(world.steps, [
      'restore running (1)',
      'lock srv_1',
      'hold srv_1',
      'backup plan bkp_1',
      'pause receiver db_1',
      'build srv_1',
      'swap srv_1',
      'finish srv_1',
      'read-only false srv_1',
      'unlock srv_1',
      'restore completed (1)',
      'database db_1 running (1)',
      'announce db_1 running',
      'event restore.finished',
    ]);
    assert.equal(world.built?.recovery, undefined);
    assert.deepEqual(world.built?.archive, {
      url: PLAN.base_backup_url,
      sha256: PLAN.base_backup_sha256,
    });
    assert.deepEqual(world.events[0]?.payload, {
      restore_id: 'rst_1',
      database_id: 'db_1',
      project_id: 'prj_1',
      in_place: true,
      status: 'completed',
    });
  });

  it('restores a point in time into a new database: made first, planned by pitr-worker, replayed', async () => {
    const world = new World();
    world.addRestore('db_2');

    await run(world);

    assert.deepEqual(world.steps.slice(1, 9), [
      'lock srv_2',
      'create srv_2 app_db_2',
      `pitr plan db_1 ${TARGET_TIME}`,
      'build srv_2',
      'swap srv_2',
      'finish srv_2',
      'read-only false srv_2',
      'unlock srv_2',
    ]);
    assert.equal(world.built?.archivedDatabaseName, 'app_db_1');
    assert.equal(world.built?.databaseName, 'app_db_2');
    assert.equal(world.built?.recovery?.targetTime, TARGET_TIME);
    assert.equal(world.built?.recovery?.segments[0]?.sizeBytes, 9);
    assert.equal(world.restores.get('rst_1')?.walFilesApplied, 7);
    assert.equal(world.databases.get('db_2')?.status, 'running');
    assert.equal(world.databases.get('db_1')?.status, 'running', 'the source is not touched');
    assert.equal(world.events[0]?.payload.in_place, false);
    assert.equal(world.events[0]?.payload.database_id, 'db_2');
  });

  it('carries on a restore a crash left swapped in, without building it again', async () => {
    const world = new World();
    world.addRestore(undefined, 'running');
    world.swapped = true;

    await run(world);

    assert.deepEqual(world.steps.slice(0, 6), [
      'restore running (0)',
      'lock srv_1',
      'swap srv_1',
      'finish srv_1',
      'read-only false srv_1',
      'unlock srv_1',
    ]);
  });

  it('fails for good on a refused plan or a corrupt archive; retries when nobody answered', async () => {
    const refused = new World();
    refused.addRestore();
    refused.planError = new DomainError('BACKUP_NOT_FOUND', 'gone');
    await assert.rejects(run(refused), permanent('no-plan'));
    assert.ok(!refused.steps.some((s) => s.startsWith('pause') || s.startsWith('build')));

    const silent = new World();
    silent.addRestore();
    silent.planError = new DomainError('SERVICE_UNAVAILABLE', 'no answer');
    await assert.rejects(run(silent), (err) => err === silent.planError);

    const corrupt = new World();
    corrupt.addRestore();
    corrupt.buildError = new CorruptArchiveError('checksum mismatch');
    await assert.rejects(run(corrupt), permanent('corrupt-archive'));
    assert.ok(!corrupt.steps.some((s) => s.startsWith('swap')));
  });

  it('ends a restore at once when a database it acts on is being deleted', async () => {
    const world = new World();
    world.addRestore('db_2');
    world.databases.get('db_2')!.status = 'deleting';

    await run(world);

    assert.deepEqual(world.steps, ['restore running (1)', 'restore failed (1)']);
    assert.equal(world.restores.get('rst_1')?.error, 'A database the restore acts on was deleted.');
  });

  it('records nothing once the attempt lost the job', async () => {
    const world = new World();
    world.addRestore();
    world.holdsJob = false;

    await assert.rejects(run(world), /was lost/);

    assert.equal(world.restores.get('rst_1')?.status, 'running');
    assert.equal(world.databases.get('db_1')?.status, 'restoring');
    assert.deepEqual(world.events, []);
  });

  it('undoes a failed in-place restore: old data back, read-write, the source serving again', async () => {
    const world = new World();
    world.addRestore(undefined, 'running');

    await fail(world, 'corrupt-archive');

    assert.deepEqual(world.steps, [
      'restore failed (1)',
      'lock srv_1',
      'abandon srv_1',
      'read-only false srv_1',
      'unlock srv_1',
      'database db_1 running (1)',
      'announce db_1 running',
      'event restore.finished',
    ]);
    assert.match(world.restores.get('rst_1')?.error ?? '', /backup is corrupted/);
    assert.equal(world.databases.get('db_1')?.error, null);
    assert.equal(world.events[0]?.payload.status, 'failed');
    assert.equal(world.events[0]?.payload.in_place, true);
  });

  it('marks the database failed when even its old data could not be brought back', async () => {
    const world = new World();
    world.addRestore(undefined, 'running');
    world.undoError = new Error('pg_ctl: no such directory');

    await fail(world, 'exhausted');

    const record = world.databases.get('db_1');
    assert.equal(record?.status, 'failed');
    assert.match(record?.error ?? '', /could not be brought back/);
    assert.match(world.restores.get('rst_1')?.error ?? '', /database was left as it was/);
  });

  it('removes the new database of a failed restore, which ends failed', async () => {
    const world = new World();
    world.addRestore('db_2', 'running');

    await fail(world, 'exhausted');

    assert.ok(world.steps.includes('destroy srv_2'));
    assert.ok(!world.steps.some((s) => s.startsWith('abandon') || s.endsWith('srv_1')));
    const error = 'The restore could not be completed; the new database could not be made.';
    assert.equal(world.databases.get('db_2')?.status, 'failed');
    assert.equal(world.databases.get('db_2')?.error, error);
    assert.equal(world.databases.get('db_1')?.status, 'running');
  });

  it('leaves a restore that completed meanwhile as it is', async () => {
    const world = new World();
    world.addRestore(undefined, 'completed');

    await fail(world, 'exhausted');

    assert.deepEqual(world.steps, ['restore failed (0)']);
    assert.deepEqual(world.events, []);
  });
});
