import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { enqueue } from './job-queue.js';
import { JobTestDatabase, SCHEMA, waitFor } from './job-test-database.js';
import type { JobFailure } from './job.types.js';

// Bounded, so a regression shows up as a failure rather than a hung run.
describe('job leases on the real PostgreSQL', { timeout: 60_000 }, () => {
  const db = new JobTestDatabase();
  const { dataSource, logs } = db;

  before(() => db.create());
  after(() => db.drop());

  /**
   * A worker that dies holding a job: its handler hangs (ignoring its abort signal) and
   * the runner is stopped with a short bound, so it stops renewing and never settles.
   */
  async function dieHolding(type: string, maxAttempts = 5): Promise<() => void> {
    const started = db.hang();
    const hung = db.hang();
    const crashed = db.runner({
      workerId: 'worker-crashed',
      stopTimeoutMs: 100,
      handlers: {
        [type]: async () => {
          started.resolve();
          await hung.promise;
        },
      },
    });
    await enqueue(dataSource, { type, key: 'k', payload: {}, maxAttempts });
    await waitFor('the handler to start', started.settled);
    await crashed.stop();
    const held = await db.job(type, 'k');
    assert.equal(held.status, 'running');
    assert.equal(held.locked_by, 'worker-crashed');
    // The lease would lapse on its own after 30 s; the test moves time instead.
    await db.expireLease(type, 'k');
    return hung.resolve;
  }

  it('lets another worker reclaim and complete a job whose worker died', async () => {
    const reviveDeadWorker = await dieHolding('crash');
    const rescued = db.hang();
    const finishRescue = db.hang();
    const rescueAttempts: number[] = [];
    db.runner({
      workerId: 'worker-rescuer',
      handlers: {
        crash: async ({ attempt }) => {
          rescueAttempts.push(attempt);
          rescued.resolve();
          await finishRescue.promise;
        },
      },
    });
    await waitFor('the rescue to start', rescued.settled);
    // The dead worker's handler returns while the rescuer works: its outcome is fenced off.
    reviveDeadWorker();
    await waitFor('the stale outcome', () => logs.has('job crash k attempt 1/5: no longer ours'));
    const rescuing = await db.job('crash', 'k');
    assert.equal(rescuing.status, 'running');
    assert.equal(rescuing.locked_by, 'worker-rescuer');
    finishRescue.resolve();
    await waitFor('reclaimed and done', db.statusIs('crash', 'k', 'done'));
    const done = await db.job('crash', 'k');
    assert.deepEqual(rescueAttempts, [2]);
    assert.equal(done.attempts, 2);
    assert.equal(done.locked_by, null);
  });

  it('fails without running again a reclaimed job whose attempts are used up', async () => {
    const reviveDeadWorker = await dieHolding('lastTry', 1);
    let calls = 0;
    const failures: JobFailure[] = [];
    db.runner({
      handlers: { lastTry: () => Promise.resolve(void (calls += 1)) },
      onFailed: (_job, failure) => Promise.resolve(void failures.push(failure)),
    });
    await waitFor('failed', db.statusIs('lastTry', 'k', 'failed'));
    assert.equal(calls, 0);
    assert.equal((await db.job('lastTry', 'k')).attempts, 1);
    assert.equal(failures.length, 1);
    assert.equal(failures[0]?.kind, 'abandoned');
    assert.match(failures[0]?.reason ?? '', /gave up after 1 attempts/);
    reviveDeadWorker();
    await waitFor('the stale outcome', () => logs.has('job lastTry k attempt 1/1: no longer ours'));
    assert.equal((await db.job('lastTry', 'k')).status, 'failed');
  });

  it('keeps renewing the lease of a handler that outlives it, so no other worker takes it', async () => {
    // Renewed every third of the lease: a renewal may come up to two thirds of a lease
    // late (a busy machine) before the job is lost, and the handler outlives 2.5 leases.
    const leaseSeconds = 4;
    let firstCalls = 0;
    let secondCalls = 0;
    const slow = async (): Promise<void> => {
      firstCalls += 1;
      await sleep(leaseSeconds * 2500);
    };
    db.runner({ leaseSeconds, handlers: { slow } });
    await enqueue(dataSource, { type: 'slow', key: 'k', payload: {} });
    await waitFor('claimed', db.statusIs('slow', 'k', 'running'));
    db.runner({
      leaseSeconds,
      handlers: { slow: () => Promise.resolve(void (secondCalls += 1)) },
    });
    await waitFor('done', db.statusIs('slow', 'k', 'done'), 40_000);
    assert.equal(firstCalls, 1);
    assert.equal(secondCalls, 0);
    assert.equal((await db.job('slow', 'k')).attempts, 1);
  });

  it('aborts a handler whose lease another worker took', async () => {
    const started = db.hang();
    let abortReason = '';
    const worker = db.runner({
      leaseSeconds: 0.6, // renewals every 200 ms
      handlers: {
        stolen: async ({ signal }) => {
          started.resolve();
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          abortReason = String((signal.reason as Error).message);
          throw new Error('aborted');
        },
      },
    });
    await enqueue(dataSource, { type: 'stolen', key: 'k', payload: {} });
    await waitFor('the handler to start', started.settled);
    // As another worker's claim would: its name and a lease of its own. Without the fresh
    // lease, ours lapses 0.6 s after its last renewal and this worker, still polling until
    // stop(), would claim the job back.
    await dataSource.query(
      `UPDATE ${SCHEMA}.jobs SET locked_by = 'worker-elsewhere', lease_until = now() + interval '1 hour'
       WHERE type = 'stolen'`,
    );
    await waitFor('the abort', () => abortReason !== '', 30_000);
    await worker.stop();
    assert.match(abortReason, /lease was lost/);
    const row = await db.job('stolen', 'k');
    assert.equal(row.locked_by, 'worker-elsewhere', 'the aborted attempt recorded nothing');
    assert.equal(row.last_error, null);
  });
});
