import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { register } from 'prom-client';
import { PermanentJobError } from './job-policy.js';
import { enqueue, runNow } from './job-queue.js';
import { JobTestDatabase, SCHEMA, waitFor } from './job-test-database.js';
import type { FailedJob, Job, JobFailure } from './job.types.js';

const SECRET = 'hunter2-superuser-password';

// Bounded, so a regression shows up as a failure rather than a hung run.
describe('JobRunner on the real PostgreSQL', { timeout: 60_000 }, () => {
  const db = new JobTestDatabase();
  const { dataSource, logs } = db;

  before(() => db.create());
  after(() => db.drop());

  it('runs a job once, woken right after enqueue, and ends done', async () => {
    const seen: Job[] = [];
    const worker = db.runner({
      pollIntervalMs: 60_000, // only wake() can start the job in time
      handlers: { once: (job) => Promise.resolve(void seen.push(job)) },
    });
    await sleep(100); // the first poll has found nothing
    assert.equal(await enqueue(dataSource, { type: 'once', key: 'db1', payload: { n: 1 } }), true);
    worker.wake();
    // Well inside the poll interval: done by then, only wake() can have started it.
    await waitFor('done', db.statusIs('once', 'db1', 'done'), 20_000);
    await sleep(200);
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]?.payload, { n: 1 });
    assert.equal(seen[0]?.attempt, 1);
    assert.equal(seen[0]?.signal.aborted, false);
    const row = await db.job('once', 'db1');
    assert.equal(row.attempts, 1);
    assert.equal(row.locked_by, null);
  });

  /** A gauge's value for one job type, as a scrape reads it. */
  const gauge = async (name: string, type: string): Promise<number | undefined> =>
    (await register.getSingleMetric(name)?.get())?.values.find((v) => v.labels['type'] === type)
      ?.value;

  it('reports the due jobs waiting for a worker, and how long the oldest has waited', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const worker = db.runner({
      pollIntervalMs: 100,
      concurrency: 1,
      handlers: { backlog: () => held },
    });
    for (const key of ['b1', 'b2', 'b3'])
      await enqueue(dataSource, { type: 'backlog', key, payload: {} });
    worker.wake();
    await waitFor(
      'one running',
      async () => (await db.job('backlog', 'b1')).status === 'running',
      20_000,
    );
    await sleep(1100);
    assert.equal(await gauge('pgcloud_jobs_waiting', 'backlog'), 2);
    assert.ok(((await gauge('pgcloud_jobs_oldest_waiting_seconds', 'backlog')) ?? 0) >= 1);
    release();
    await waitFor('all done', db.statusIs('backlog', 'b3', 'done'), 20_000);
    assert.equal(await gauge('pgcloud_jobs_waiting', 'backlog'), undefined, 'nothing waits');
  });

  it('holds a job enqueued for later until runNow makes it due', async () => {
    const seen: string[] = [];
    const worker = db.runner({
      pollIntervalMs: 100,
      handlers: { later: (job) => Promise.resolve(void seen.push(job.key)) },
    });
    const runAt = new Date(Date.now() + 3_600_000);
    await enqueue(dataSource, { type: 'later', key: 'r1', payload: {}, runAt });
    worker.wake();
    await sleep(500); // several polls
    assert.deepEqual(seen, [], 'not due yet');
    assert.equal(await runNow(dataSource, { type: 'later', key: 'r1', schema: SCHEMA }), true);
    worker.wake();
    await waitFor('done', db.statusIs('later', 'r1', 'done'), 20_000);
    assert.deepEqual(seen, ['r1']);
    assert.equal(await runNow(dataSource, { type: 'later', key: 'r1', schema: SCHEMA }), false);
  });

  it('adds no job when the enqueuing transaction rolls back', async () => {
    await assert.rejects(
      dataSource.transaction(async (manager) => {
        assert.equal(await enqueue(manager, { type: 'tx', key: 'a', payload: {} }), true);
        throw new Error('the owner record failed to save');
      }),
      /owner record failed/,
    );
    assert.equal(await db.jobCount('tx'), 0);
    await dataSource.transaction(async (manager) => {
      await enqueue(manager, { type: 'tx', key: 'a', payload: {} });
    });
    assert.equal(await db.jobCount('tx'), 1);
  });

  it('adds no second unfinished job of the same type and key', async () => {
    assert.equal(await enqueue(dataSource, { type: 'dup', key: 'k', payload: 1 }), true);
    assert.equal(await enqueue(dataSource, { type: 'dup', key: 'k', payload: 2 }), false);
    const other = { type: 'dup', key: 'other', payload: 3, schema: SCHEMA };
    assert.equal(await enqueue(dataSource.manager, other), true);
    assert.equal(await db.jobCount('dup'), 2);
    await dataSource.query(`UPDATE ${SCHEMA}.jobs SET status = 'done' WHERE type = 'dup'`);
    assert.equal(await enqueue(dataSource, { type: 'dup', key: 'k', payload: 4 }), true);
  });

  it('retries a failing handler after the backoff, then succeeds, never logging the payload', async () => {
    const startedAt: number[] = [];
    db.runner({
      backoff: (attempt) => 300 * attempt,
      handlers: {
        flaky: ({ attempt }) => {
          startedAt.push(Date.now());
          return attempt < 3 ? Promise.reject(new Error(`flaky ${attempt}`)) : Promise.resolve();
        },
      },
    });
    await enqueue(dataSource, { type: 'flaky', key: 'k', payload: { password: SECRET } });
    await waitFor('done', db.statusIs('flaky', 'k', 'done'));
    const row = await db.job('flaky', 'k');
    assert.equal(row.attempts, 3);
    assert.equal(row.last_error, 'flaky 2');
    const [first = 0, second = 0, third = 0] = startedAt;
    assert.equal(startedAt.length, 3);
    assert.ok(second - first >= 250, `first backoff ${second - first} ms`);
    assert.ok(third - second >= 550, `second backoff ${third - second} ms`);
    assert.ok(logs.has('job flaky k attempt 1/5: failed, retrying in 300 ms: flaky 1'));
    assert.ok(!logs.has(SECRET), 'the payload is never logged');
  });

  it('fails after max attempts and lets the owner fail its record in the same transaction', async () => {
    const failures: { job: FailedJob; failure: JobFailure }[] = [];
    let calls = 0;
    await dataSource.query(`INSERT INTO ${SCHEMA}.records VALUES ('r1', 'pending', NULL)`);
    db.runner({
      handlers: {
        doomed: () => {
          calls += 1;
          return Promise.reject(new Error('initdb exited with 1'));
        },
      },
      onFailed: async (failed, failure, manager) => {
        failures.push({ job: failed, failure });
        await manager.query(
          `UPDATE ${SCHEMA}.records SET status = 'failed', reason = $2 WHERE key = $1`,
          [failed.key, failure.reason],
        );
      },
    });
    await enqueue(dataSource, { type: 'doomed', key: 'r1', payload: {}, maxAttempts: 3 });
    await waitFor('failed', db.statusIs('doomed', 'r1', 'failed'));
    const row = await db.job('doomed', 'r1');
    assert.equal(row.attempts, 3);
    assert.equal(row.last_error, 'initdb exited with 1');
    assert.equal(calls, 3);
    assert.equal(failures.length, 1);
    assert.deepEqual(failures[0]?.failure, { kind: 'exhausted', reason: 'initdb exited with 1' });
    assert.equal(failures[0]?.job.key, 'r1');
    assert.equal(failures[0]?.job.attempt, 3);
    const records = await dataSource.query<unknown[]>(
      `SELECT status, reason FROM ${SCHEMA}.records`,
    );
    assert.deepEqual(records, [{ status: 'failed', reason: 'initdb exited with 1' }]);
  });

  it('fails a PermanentJobError at once', async () => {
    const failures: JobFailure[] = [];
    let calls = 0;
    db.runner({
      handlers: {
        invalid: () => {
          calls += 1;
          return Promise.reject(new PermanentJobError('no such region', 'bad-region'));
        },
      },
      onFailed: (_job, failure) => Promise.resolve(void failures.push(failure)),
    });
    await enqueue(dataSource, { type: 'invalid', key: 'k', payload: {}, maxAttempts: 5 });
    await waitFor('failed', db.statusIs('invalid', 'k', 'failed'));
    assert.equal((await db.job('invalid', 'k')).attempts, 1);
    assert.equal(calls, 1);
    assert.deepEqual(failures, [{ kind: 'bad-region', reason: 'no such region' }]);
  });

  it('runs at most `concurrency` handlers at once', async () => {
    let running = 0;
    let most = 0;
    // Handlers hold until the test lets them go, so two overlap however slowly the jobs
    // are enqueued and claimed.
    const release = db.hang();
    db.runner({
      concurrency: 2,
      handlers: {
        busy: async () => {
          running += 1;
          most = Math.max(most, running);
          await release.promise;
          await sleep(150);
          running -= 1;
        },
      },
    });
    for (let i = 0; i < 5; i++)
      await enqueue(dataSource, { type: 'busy', key: `k${i}`, payload: {} });
    await waitFor('two handlers at once', () => running === 2);
    // Three jobs wait meanwhile: a runner past its concurrency would start one within a
    // poll (50 ms).
    await sleep(500);
    release.resolve();
    await waitFor('all done', async () => (await db.jobCount('busy', 'done')) === 5);
    assert.equal(most, 2);
  });

  it('stops claiming on stop() and waits for the running handler', async () => {
    let finished = 0;
    // The first handler holds until stop() has begun: were it to end before, the runner
    // would rightly claim the second job.
    const started = db.hang();
    const stopCalled = db.hang();
    const worker = db.runner({
      concurrency: 1,
      handlers: {
        graceful: async () => {
          started.resolve();
          await stopCalled.promise;
          await sleep(300);
          finished += 1;
        },
      },
    });
    await enqueue(dataSource, { type: 'graceful', key: 'a', payload: {} });
    await enqueue(dataSource, { type: 'graceful', key: 'b', payload: {} });
    await waitFor('the first handler to start', started.settled);
    assert.equal(await db.jobCount('graceful', 'running'), 1);
    const stopping = worker.stop(); // stops claiming at once, then waits
    stopCalled.resolve();
    await stopping;
    assert.equal(finished, 1);
    assert.equal(await db.jobCount('graceful', 'done'), 1);
    assert.equal(await db.jobCount('graceful', 'queued'), 1);
  });
});
