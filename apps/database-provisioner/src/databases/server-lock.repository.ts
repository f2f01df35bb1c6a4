import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { QueryRunner } from 'typeorm';

/** How the lock is taken and watched. */
export interface ServerLockOptions {
  /** Wait for the lock, or answer undefined at once when someone else holds it. */
  wait: boolean;
  /** The caller's own signal (a job's): it aborts work's signal too. */
  signal?: AbortSignal;
  /** How often the lock's session is asked to answer, and how long it may take to. */
  checkEveryMs?: number;
}

/** The node-postgres client under a TypeORM query runner: its events, and end(). */
interface SessionConnection {
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeListener(event: 'error' | 'end', listener: (err: Error) => void): unknown;
  end(): Promise<void>;
}

/** The lock's session was lost while work ran: the lock went with it. */
export class ServerLockLostError extends Error {
  override name = 'ServerLockLostError';
}

const DEFAULT_CHECK_EVERY_MS = 2000;
const logger = new Logger('ServerLock');

/**
 * Runs `work` while holding the advisory lock named `lockName` on the metadata database.
 * The lock is a session lock, held on one connection: if that session is lost (the
 * connection fails or ends, or stops answering a `SELECT 1` sent every checkEveryMs), the
 * lock is gone without a word. So `work` gets a signal that is aborted then (and when the
 * caller's own signal is): it must stop rather than go on unlocked.
 */
export async function withAdvisoryLock<T>(
  dataSource: DataSource,
  lockName: string,
  work: (signal: AbortSignal) => Promise<T>,
  options: ServerLockOptions,
): Promise<T | undefined> {
  const runner = dataSource.createQueryRunner();
  const connection = (await runner.connect()) as SessionConnection;
  let watch: LockSessionWatch | undefined;
  try {
    const take = options.wait ? 'pg_advisory_lock' : 'pg_try_advisory_lock';
    const [row] = (await runner.query(`SELECT ${take}(hashtext($1)) AS locked`, [lockName])) as {
      locked: boolean | '';
    }[];
    // pg_advisory_lock answers void (''): it returned, so the lock is held.
    if (!options.wait && !row?.locked) return undefined;
    watch = new LockSessionWatch(runner, connection, lockName, options.checkEveryMs);
    const signal = options.signal ? AbortSignal.any([options.signal, watch.signal]) : watch.signal;
    try {
      return await work(signal);
    } finally {
      watch.stop();
      // A lost session took the lock with it: there is nothing to unlock, nor a session to ask.
      if (!watch.signal.aborted)
        await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [lockName]);
    }
  } finally {
    await runner.release();
  }
}

/** withAdvisoryLock on the metadata database's DataSource, for the classes that take locks. */
@Injectable()
export class ServerLockRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` holding the lock `lockName`; see withAdvisoryLock. */
  hold<T>(
    lockName: string,
    work: (signal: AbortSignal) => Promise<T>,
    options: ServerLockOptions,
  ): Promise<T | undefined> {
    return withAdvisoryLock(this.dataSource, lockName, work, options);
  }
}

/**
 * Watches the session a lock lives on, aborting `signal` once it is lost. A session that
 * does not answer in time is ended, so the server lets the lock go rather than keep it
 * for a client that has stopped relying on it.
 */
class LockSessionWatch {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly onError = (err: Error): void =>
    this.lost(`its connection failed: ${err.message}`);
  private readonly onEnd = (): void => this.lost('its connection ended');

  constructor(
    private readonly runner: QueryRunner,
    private readonly connection: SessionConnection,
    private readonly lockName: string,
    private readonly checkEveryMs = DEFAULT_CHECK_EVERY_MS,
  ) {
    connection.on('error', this.onError);
    connection.on('end', this.onEnd);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.connection.removeListener('error', this.onError);
    this.connection.removeListener('end', this.onEnd);
  }

  private schedule(): void {
    if (this.stopped || this.signal.aborted) return;
    this.timer = setTimeout(() => void this.check(), this.checkEveryMs);
  }

  private async check(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer in time')), this.checkEveryMs);
    });
    try {
      await Promise.race([this.runner.query('SELECT 1'), timedOut]);
    } catch (err) {
      if (this.stopped) return; // the work ended meanwhile: its unlock or release speaks now
      this.lost(`it did not answer: ${err instanceof Error ? err.message : String(err)}`);
      this.connection.end().catch(() => undefined);
      return;
    } finally {
      clearTimeout(timer);
    }
    this.schedule();
  }

  private lost(why: string): void {
    if (this.stopped || this.signal.aborted) return;
    const message = `the lock on ${this.lockName} was lost with its session: ${why}`;
    logger.error(`${message}; stopping the work done under it`);
    this.controller.abort(new ServerLockLostError(message));
  }
}
