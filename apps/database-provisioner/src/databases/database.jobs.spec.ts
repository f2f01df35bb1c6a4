import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import type { EventDef, RequestContext } from '@pgcloud/contracts';
import type { FailedJob, Job, JobFailure } from '@pgcloud/jobs';
import type { Outbox } from '@pgcloud/messaging';
import pg from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { FindOperator } from 'typeorm';
import type { ProvisionerConfig } from '../config.js';
import type { SecretBox } from '@pgcloud/config';
import type { DatabaseDriver, ServerSpec } from '../drivers/database-driver.js';
import { RestoreEntity } from '../restores/restore.entity.js';
import { RestoresRepository } from '../restores/restores.repository.js';
import { CredentialsEntity, DatabaseEntity } from './database.entity.js';
import { DatabaseJobs } from './database.jobs.js';
import { DatabasesRepository } from './databases.repository.js';
import { ServerLockRepository } from './server-lock.repository.js';

type Payload = { database_id: string; request_id: string };
type Where = Record<string, unknown>;
/** What the runner was given: the handler of each job type, and onFailed. */
interface RunnerView {
  handlers: Record<string, (job: Job<Payload>) => Promise<void>>;
  settings: {
    onFailed: (job: FailedJob<Payload>, f: JobFailure, m: EntityManager) => Promise<void>;
  };
}

/** What TLS logins (pg.Client, faked below) answer, and whom they reached. */
const login = { ssl: true, reached: [] as string[] };
class FakePgClient {
  constructor(private readonly options: { host: string; port: number; password: string }) {}
  on(): void {}
  connect(): Promise<void> {
    login.reached.push(`${this.options.host}:${this.options.port} ${this.options.password}`);
    return Promise.resolve();
  }
  query(sql: string): Promise<{ rows: object[] }> {
    return Promise.resolve({ rows: sql.includes('pg_stat_ssl') ? [{ ssl: login.ssl }] : [{}] });
  }
  end(): Promise<void> {
    return Promise.resolve();
  }
}

/** A row against a `where`: each column equal, or in TypeORM's In(). */
const matches = (row: object, where: Where) =>
  Object.entries(where).every(([k, v]) => {
    const value = (row as Record<string, unknown>)[k];
    return v instanceof FindOperator && v.type === 'in'
      ? (v.value as unknown[]).includes(value)
      : value === v;
  });

/**
 * The provisioner's tables (databases, credentials, restores, jobs), the server lock, the
 * driver and the outbox, in memory, under the real repositories; `steps` tells what
 * reached the outside, in order.
 */
class World {
  databases = new Map<string, DatabaseEntity>();
  credentials = new Map<string, CredentialsEntity>();
  restores = new Map<string, RestoreEntity>();
  steps: string[] = [];
  events: { name: string; payload: Record<string, unknown> }[] = [];
  holdsJob = true;
  /** Runs while the driver makes the server: what others do to the record meanwhile. */
  meanwhile: () => void = () => undefined;
  manager = {} as EntityManager;

  constructor() {
    login.ssl = true;
    login.reached = [];
  }

  addDatabase(status: DatabaseEntity['status']): DatabaseEntity {
    const record = Object.assign(new DatabaseEntity(), {
      id: 'db_1',
      projectId: 'prj_1',
      name: 'shop',
      platformServiceId: 'srv_1',
      status,
      port: 5433,
      config: {},
      error: null,
    });
    this.databases.set(record.id, record);
    this.credentials.set('db_1', {
      databaseId: 'db_1',
      passwordSealed: 'sealed:pw',
      replicationPasswordSealed: 'sealed:repl',
    });
    return record;
  }

  table(entity: unknown): Map<string, object> {
    if (entity === DatabaseEntity) return this.databases;
    if (entity === CredentialsEntity) return this.credentials;
    if (entity === RestoreEntity) return this.restores;
    throw new Error(`no table for ${String(entity)}`);
  }

  jobs(): DatabaseJobs {
    const name = (entity: unknown) => (entity as { name: string }).name;
    const find = (entity: unknown, where: Where) => {
      const found = [...this.table(entity).values()].find((r) => matches(r, where));
      return Promise.resolve(found ? { ...found } : null);
    };
    const update = (entity: unknown, where: Where, set: object) => {
      const found = [...this.table(entity).values()].filter((r) => matches(r, where));
      for (const row of found) Object.assign(row, set);
      this.steps.push(`${name(entity)} ${JSON.stringify(set)} (${found.length})`);
      return Promise.resolve({ affected: found.length });
    };
    const remove = (entity: unknown, where: Where) => {
      const table = this.table(entity);
      const found = [...table.entries()].filter(([, r]) => matches(r, where));
      for (const [key] of found) table.delete(key);
      this.steps.push(`delete ${name(entity)} ${JSON.stringify(where)} (${found.length})`);
      return Promise.resolve({ affected: found.length });
    };
    const query = (sql: string, values: unknown[]) => {
      if (sql.includes('FOR UPDATE')) return Promise.resolve(this.holdsJob ? [{ id: 'job' }] : []);
      if (sql.includes('INSERT INTO')) {
        this.steps.push(`enqueue ${String(values[1])} ${String(values[2])}`);
        return Promise.resolve([{ id: 'job' }]);
      }
      if (sql.includes("SET status = 'deleting'")) {
        const [ids, from] = values as [string[], string[]];
        // As the statement's own filter says: a record already leaving does not move.
        const moved = [...this.databases.values()].filter(
          (d) => ids.includes(d.id) && from.includes(d.status),
        );
        for (const d of moved) d.status = 'deleting';
        return Promise.resolve(moved.map((d) => ({ id: d.id, project_id: d.projectId })));
      }
      throw new Error(`unexpected SQL ${sql}`);
    };
    const manager = (this.manager = {
      query,
      findOneBy: find,
      findOneByOrFail: async (entity: unknown, where: Where) =>
        (await find(entity, where)) ?? assert.fail(),
      update,
      delete: remove,
    } as unknown as EntityManager);
    const dataSource = {
      manager,
      transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager),
      // The server lock's session: taken and let go around the work.
      createQueryRunner: () => ({
        connect: () => Promise.resolve({ on() {}, removeListener() {}, end: () => undefined }),
        query: (sql: string, values: string[]) => {
          this.steps.push(`${sql.includes('unlock') ? 'unlock' : 'lock'} ${values[0]}`);
          return Promise.resolve([{ locked: '' }]);
        },
        release: () => Promise.resolve(),
      }),
    } as unknown as DataSource;
    const driver = {
      create: (spec: ServerSpec) => {
        this.steps.push(`create ${spec.serverId} ${spec.port} ${spec.databaseName}`);
        this.meanwhile();
        return Promise.resolve({ host: '127.0.0.1', port: spec.port });
      },
      caCertificate: () => Promise.resolve('ca'),
      destroy: (serverId: string) => {
        this.steps.push(`destroy ${serverId}`);
        return Promise.resolve();
      },
    } as unknown as DatabaseDriver;
    const secrets = {
      open: (sealed: string) => sealed.replace('sealed:', ''),
    } as unknown as SecretBox;
    const outbox = {
      add: (_m: unknown, def: EventDef<object>, _c: RequestContext, p: { status?: string }) => {
        this.steps.push(`announce ${def.name} ${p.status ?? ''}`.trim());
        this.events.push({ name: def.name, payload: p });
        return Promise.resolve('evt');
      },
    } as unknown as Outbox;
    const config = { JOB_LEASE_SECONDS: 30 } as ProvisionerConfig;
    return new DatabaseJobs(
      new DatabasesRepository(dataSource),
      new RestoresRepository(dataSource),
      new ServerLockRepository(dataSource),
      driver,
      secrets,
      outbox,
      config,
    );
  }
}

const runnerOf = (jobs: DatabaseJobs) => (jobs as unknown as { runner: RunnerView }).runner;
const run = (jobs: DatabaseJobs, type: string) =>
  runnerOf(jobs).handlers[type]({
    id: 'job_1',
    type,
    key: 'db_1',
    payload: { database_id: 'db_1', request_id: 'req_1' },
    attempt: 1,
    signal: new AbortController().signal,
  });
const fail = (jobs: DatabaseJobs, world: World, type: string) =>
  runnerOf(jobs).settings.onFailed(
    {
      id: 'job_1',
      type,
      key: 'db_1',
      attempt: 3,
      payload: { database_id: 'db_1', request_id: 'req_1' },
    },
    { kind: 'exhausted', reason: 'initdb: no space left on device' },
    world.manager,
  );
const PROVISION = 'database.provision';
const REMOVE = 'database.remove';
const FAILED_REASON = 'The server could not be made ready; create the database again.';

describe('DatabaseJobs', () => {
  const realClient = pg.Client;
  before(() => {
    Logger.overrideLogger(false);
    (pg as { Client: unknown }).Client = FakePgClient;
  });
  after(() => {
    pg.Client = realClient;
  });

  it('provisions under the server lock: made, logged in over TLS, then `running` and announced', async () => {
    const world = new World();
    world.addDatabase('provisioning');

    await run(world.jobs(), PROVISION);

    assert.deepEqual(world.steps, [
      'lock srv_1',
      'create srv_1 5433 shop',
      'DatabaseEntity {"status":"running","error":null,"host":"127.0.0.1"} (1)',
      'announce database.status-changed running',
      'unlock srv_1',
    ]);
    assert.deepEqual(login.reached, ['127.0.0.1:5433 pw'], 'the stored password, opened');
    assert.equal(world.databases.get('db_1')?.status, 'running');
    assert.deepEqual(world.events[0]?.payload, {
      database_id: 'db_1',
      project_id: 'prj_1',
      status: 'running',
    });
  });

  it('leaves a record that is not provisioning alone', async () => {
    const world = new World();
    world.addDatabase('running');
    await run(world.jobs(), PROVISION);
    assert.deepEqual(world.steps, []);
  });

  it('does not call a server running when its login is not encrypted', async () => {
    const world = new World();
    world.addDatabase('provisioning');
    login.ssl = false;

    await assert.rejects(run(world.jobs(), PROVISION), /without TLS/);

    assert.equal(world.databases.get('db_1')?.status, 'provisioning');
    assert.deepEqual(world.events, []);
  });

  it('writes nothing once the attempt lost the job', async () => {
    const world = new World();
    world.addDatabase('provisioning');
    world.holdsJob = false;

    await assert.rejects(run(world.jobs(), PROVISION), /no longer held/);

    assert.equal(world.databases.get('db_1')?.status, 'provisioning');
    assert.deepEqual(world.events, []);
  });

  it('destroys the server of a database deleted while it was being made, announcing nothing', async () => {
    const world = new World();
    const record = world.addDatabase('provisioning');
    world.meanwhile = () => (record.status = 'deleting');

    await run(world.jobs(), PROVISION);

    assert.deepEqual(world.steps.slice(-3), [
      'DatabaseEntity {"status":"running","error":null,"host":"127.0.0.1"} (0)',
      'destroy srv_1',
      'unlock srv_1',
    ]);
    assert.equal(record.status, 'deleting');
    assert.deepEqual(world.events, []);
  });

  it('marks a provisioning that failed for good `failed` with a reason, destroys its server and announces it', async () => {
    const world = new World();
    world.addDatabase('provisioning');
    const jobs = world.jobs();

    await fail(jobs, world, PROVISION);

    assert.deepEqual(world.steps, [
      `DatabaseEntity {"status":"failed","error":"${FAILED_REASON}"} (1)`,
      'destroy srv_1',
      'announce database.status-changed failed',
    ]);
    assert.equal(world.databases.get('db_1')?.error, FAILED_REASON);
    assert.equal(world.events[0]?.payload.error, FAILED_REASON);
  });

  it('leaves a database that moved on, and any failed removal, as they are', async () => {
    const moved = new World();
    moved.addDatabase('deleting');
    await fail(moved.jobs(), moved, PROVISION);
    assert.deepEqual(moved.steps, [
      `DatabaseEntity {"status":"failed","error":"${FAILED_REASON}"} (0)`,
    ]);
    assert.equal(moved.databases.get('db_1')?.status, 'deleting');

    const removal = new World();
    removal.addDatabase('deleting');
    await fail(removal.jobs(), removal, REMOVE);
    assert.deepEqual(removal.steps, []);
  });

  it('removes a database: its server under the lock, then its passwords, restores and record', async () => {
    const world = new World();
    world.addDatabase('deleting');
    world.restores.set('rst_1', { id: 'rst_1', databaseId: 'db_1' } as RestoreEntity);
    world.restores.set('rst_2', { id: 'rst_2', databaseId: 'db_2' } as RestoreEntity);

    await run(world.jobs(), REMOVE);

    assert.deepEqual(world.steps, [
      'lock srv_1',
      'destroy srv_1',
      'unlock srv_1',
      'delete CredentialsEntity {"databaseId":"db_1"} (1)',
      'delete RestoreEntity {"databaseId":"db_1"} (1)',
      'delete DatabaseEntity {"id":"db_1","status":"deleting"} (1)',
    ]);
    assert.equal(world.databases.size, 0);
    assert.deepEqual([...world.restores.keys()], ['rst_2']);
  });

  it('schedules a removal once: `deleting`, the job queued and database.deleted announced', async () => {
    const world = new World();
    world.addDatabase('running');
    const jobs = world.jobs();

    await jobs.scheduleRemoval({ requestId: 'req_1' }, ['db_1']);
    await jobs.scheduleRemoval({ requestId: 'req_2' }, ['db_1']);

    assert.equal(world.databases.get('db_1')?.status, 'deleting');
    assert.deepEqual(world.steps, [`enqueue ${REMOVE} db_1`, 'announce database.deleted']);
    assert.deepEqual(world.events[0]?.payload, { database_id: 'db_1', project_id: 'prj_1' });
  });

  it('announces a record still `deleting` as failed, with its error', async () => {
    const world = new World();
    const record = world.addDatabase('deleting');
    await world.jobs().announce(world.manager, { requestId: 'r' }, { ...record, error: 'gone' });
    assert.deepEqual(world.events[0]?.payload, {
      database_id: 'db_1',
      project_id: 'prj_1',
      status: 'failed',
      error: 'gone',
    });
  });
});
