import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { QueryRunner } from 'typeorm';
import { holdJob } from './job-ownership.js';
import { enqueue } from './job-queue.js';
import { JobTestDatabase, SCHEMA, waitFor } from './job-test-database.js';
import type { Job } from './job.types.js';

// Bounded, so a regression shows up as a failure rather than a hung run.
describe('leases that fence the work, on the real PostgreSQL', { timeout: 90_000 }, () => {
  const db = new JobTestDatabase();
  const { dataSource, logs } = db;

  before(() => db.create());
  after(() => db.drop());

  /** What the first attempt saw when its signal was aborted. */
  interface Stopped {
    reason: string;
    /** Date.now() at the abort, to compare with the lease's end on the same machine. */
    at: number;
  }

  /**
   * Runs `type` on a runner with `leaseSeconds`: attempt 1 waits for its signal and notes
   * when it came; later attempts end at once. Answers a promise of attempt 1's abort, and
   * one that resolves once attempt 1 has started.
   */
  function runFenced(type: string, leaseSeconds: number) {
    const started = db.hang();
    let stopped: Stopped | undefined;
    db.runner({
      workerId: `worker-${type}`,
      leaseSeconds,
      handlers: {
        [type]: async ({ attempt, signal }: Job) => {
          if (attempt > 1) return;
          started.resolve();
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          stopped = { reason: (signal.reason as Error).message, at: Date.now() };
          throw signal.reason;
        },
      },
    });
    return { started, stopped: () => stopped };
  }

  /** The job's lease end as the database has it, in Date.now() terms. */
  async function leaseEnd(type: string): Promise<number> {
    const [row] = await dataSource.query<{ ms: string }[]>(
      `SELECT (extract(epoch FROM lease_until) * 1000)::bigint::text AS ms
         FROM ${SCHEMA}.jobs WHERE type = $1`,
      [type],
    );
    assert.ok(row, 'the job has a lease');
    return Number(row.ms);
  }

  it('stops a handler whose renewals hang before its lease can lapse', async () => {
    const type = 'renewHangs';
    // Renewed every 2 s; stopped once 4 s pass without one, 2 s before the lease's end.
    const { started, stopped } = runFenced(type, 6);
    await enqueue(dataSource, { type, key: 'k', payload: {} });
    await waitFor('the handler to start', started.settled);
    // Another session holds the job's row: every renewal waits on it and times out.
    const blocker: QueryRunner = dataSource.createQueryRunner();
    await blocker.connect();
    await blocker.startTransaction();
    try {
      await blocker.query(`SELECT id FROM ${SCHEMA}.jobs WHERE type = $1 FOR UPDATE`, [type]);
      await waitFor('the handler to be stopped', () => stopped() !== undefined, 30_000);
      // Read while the renewals still wait: the lease is the one last renewed.
      const end = await leaseEnd(type);
      const seen = stopped();
      assert.ok(seen);
      assert.match(seen.reason, /could not be renewed/);
      assert.ok(seen.at < end, `stopped at ${seen.at}, before the lease's end at ${end}`);
      assert.ok(logs.has(`job ${type} k attempt 1/5: lease not renewed`));
    } finally {
      await blocker.rollbackTransaction();
      await blocker.release();
    }
    // Nothing was settled by the stopped attempt: the job is taken again once its lease lapses.
    await waitFor('the job done by a later attempt', db.statusIs(type, 'k', 'done'), 30_000);
    assert.equal((await db.job(type, 'k')).attempts, 2);
  });

  it('stops a handler whose renewals fail before its lease can lapse', async () => {
    const type = 'renewFails';
    const { started, stopped } = runFenced(type, 4.5);
    await enqueue(dataSource, { type, key: 'k', payload: {} });
    await waitFor('the handler to start', started.settled);
    // The renewals fail at once, as with a database that refuses connections.
    await dataSource.query(`ALTER TABLE ${SCHEMA}.jobs RENAME TO jobs_away`);
    try {
      await waitFor('the handler to be stopped', () => stopped() !== undefined, 30_000);
      assert.ok(logs.has(`job ${type} k attempt 1/5: could not renew the lease`));
    } finally {
      await dataSource.query(`ALTER TABLE ${SCHEMA}.jobs_away RENAME TO jobs`);
    }
    const end = await leaseEnd(type);
    const seen = stopped();
    assert.ok(seen);
    assert.match(seen.reason, /could not be renewed/);
    assert.ok(seen.at < end, `stopped at ${seen.at}, before the lease's end at ${end}`);
    await waitFor('the job done by a later attempt', db.statusIs(type, 'k', 'done'), 30_000);
    assert.equal((await db.job(type, 'k')).attempts, 2);
  });

  it('lets holdJob fence a final write to the attempt that holds a live lease', async () => {
    await dataSource.query(
      `INSERT INTO ${SCHEMA}.jobs (id, type, key, payload, status, attempts, lease_until, locked_by)
       VALUES ('job_fence', 'fence', 'k', '{}', 'running', 2, now() + interval '1 hour', 'w')`,
    );
    const holds = (attempt: number) =>
      dataSource.transaction((manager) => holdJob(manager, { id: 'job_fence', attempt }));
    assert.equal(await holds(2), true, 'the attempt that holds the lease');
    assert.equal(await holds(1), false, 'an earlier attempt, whose job another claim took');
    await db.expireLease('fence', 'k');
    assert.equal(await holds(2), false, 'an attempt whose lease lapsed');
  });
});
