import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { eventually, TcpProxy } from '@pgcloud/testing';
import { loadLauncherEnv } from '@pgcloud/devstack';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { ServerLockLostError, withAdvisoryLock } from './server-lock.repository.js';

/** A DataSource on the maintenance database: advisory locks need no tables. */
function dataSourceAt(url: string): DataSource {
  return new DataSource({ type: 'postgres', url });
}

describe('server locks that notice a lost session', { timeout: 60_000 }, () => {
  const url = new URL(loadLauncherEnv().DATABASE_URL);
  url.pathname = '/postgres';
  const dataSource = dataSourceAt(url.toString());
  const observer = new pg.Client({ connectionString: url.toString() });

  before(async () => {
    await dataSource.initialize();
    await observer.connect();
  });

  after(async () => {
    await observer.end();
    await dataSource.destroy();
  });

  const lockName = (): string => `srv_test_${randomBytes(6).toString('hex')}`;

  /** The backend holding the advisory lock `name` takes (one key: objid holds its low half). */
  async function holderOf(name: string): Promise<number | undefined> {
    const { rows } = await observer.query<{ pid: number }>(
      `SELECT pid FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 1
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND objid = (hashtext($1)::bigint & 4294967295)::text::oid`,
      [name],
    );
    return rows[0]?.pid;
  }

  /** Whether another session could take the lock now (and lets it go at once). */
  async function free(name: string): Promise<boolean> {
    const { rows } = await observer.query<{ taken: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS taken',
      [name],
    );
    if (rows[0]?.taken) await observer.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    return rows[0]?.taken === true;
  }

  /** Work that runs until its signal is aborted, then throws the reason. */
  function untilAborted(started: () => void) {
    return async (signal: AbortSignal): Promise<never> => {
      started();
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw signal.reason;
    };
  }

  it('aborts the work when the session holding the lock is terminated', async () => {
    const name = lockName();
    let running = false;
    const locked = withAdvisoryLock(
      dataSource,
      name,
      untilAborted(() => (running = true)),
      { wait: true },
    );
    locked.catch(() => undefined);
    const pid = await eventually(async () => {
      assert.ok(running, 'the work started');
      const holder = await holderOf(name);
      assert.ok(holder, 'the lock is held');
      return holder;
    });
    await observer.query('SELECT pg_terminate_backend($1)', [pid]);
    await assert.rejects(locked, (err: unknown) => {
      assert.ok(err instanceof ServerLockLostError, String(err));
      assert.match(err.message, new RegExp(`lock on ${name} was lost`));
      return true;
    });
    // The client hears the FATAL before the backend has exited and let its locks go.
    await eventually(async () =>
      assert.equal(await free(name), true, 'the lock went with its session'),
    );
  });

  it('aborts the work when the session stops answering, and lets the lock go', async () => {
    const name = lockName();
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    const proxied = dataSourceAt(proxy.rewrite(url.toString()));
    await proxied.initialize();
    try {
      let running = false;
      const locked = withAdvisoryLock(
        proxied,
        name,
        untilAborted(() => (running = true)),
        { wait: true, checkEveryMs: 300 },
      );
      locked.catch(() => undefined);
      await eventually(async () => {
        assert.ok(running, 'the work started');
        assert.ok(await holderOf(name), 'the lock is held');
      });
      proxy.freeze();
      await assert.rejects(locked, (err: unknown) => {
        assert.ok(err instanceof ServerLockLostError, String(err));
        assert.match(err.message, /did not answer/);
        return true;
      });
      // The silent session was ended: the server lets its lock go.
      await eventually(async () => assert.equal(await free(name), true));
    } finally {
      await proxy.close();
      await proxied.destroy().catch(() => undefined);
    }
  });

  it("aborts the work with the caller's signal, then unlocks as usual", async () => {
    const name = lockName();
    const caller = new AbortController();
    let running = false;
    const locked = withAdvisoryLock(
      dataSource,
      name,
      untilAborted(() => (running = true)),
      { wait: true, signal: caller.signal },
    );
    locked.catch(() => undefined);
    await eventually(() => assert.ok(running, 'the work started'));
    caller.abort(new Error('the job lease was lost'));
    await assert.rejects(locked, /the job lease was lost/);
    assert.equal(await free(name), true);
  });

  it('answers undefined at once when another session holds the lock', async () => {
    const name = lockName();
    await observer.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      let ran = false;
      const answer = await withAdvisoryLock(dataSource, name, () => Promise.resolve((ran = true)), {
        wait: false,
      });
      assert.equal(answer, undefined);
      assert.equal(ran, false);
    } finally {
      await observer.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
});
