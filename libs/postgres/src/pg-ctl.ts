import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { RunAsOptions } from './os-user.js';
import { runPgTool } from './os-user.js';

/**
 * What pg_ctl is asked to do and wait for. Never `start`: pg_ctl starts the server through
 * /bin/sh; startPostmaster (postmaster.ts) starts it from an argument vector.
 */
export type PgCtlAction = 'stop' | 'promote';

// pg_ctl -w looks every 100 ms; a server here stops in about 20, so most of each wait was
// pg_ctl's sleep.
const LOOK_EVERY_MS = 10;
// postmaster.pid's lines (PostgreSQL's LOCK_FILE_LINE_*, counted from 0).
const PID_LINE = 0;
const START_TIME_LINE = 2;
const STATUS_LINE = 7;
// pg_control's DBState, a uint32 after the system identifier and two version numbers (the
// layout pg_ctl reads too): DB_IN_PRODUCTION once recovery has ended.
const CONTROL_STATE_OFFSET = 16;
const DB_IN_PRODUCTION = 6;

/** What a data directory's postmaster.pid says; undefined when there is none (yet). */
export interface PostmasterStatus {
  pid: number;
  /** Seconds since the epoch, as the postmaster wrote it. */
  startTime: number;
  /**
   * `starting`, `stopping`, `ready` (taking connections, a hot standby's too) or `standby`
   * (up, taking none); blank until the postmaster has one.
   */
  status: string;
}

export async function readPostmasterStatus(pgdata: string): Promise<PostmasterStatus | undefined> {
  const text = await readFile(join(pgdata, 'postmaster.pid'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const lines = text.split('\n');
  return {
    pid: Number(lines[PID_LINE]),
    startTime: Number(lines[START_TIME_LINE]),
    status: (lines[STATUS_LINE] ?? '').trim(),
  };
}

/**
 * `pg_ctl -D pgdata <args> -w <action>`, answering as soon as the data directory shows
 * what pg_ctl waits for (no postmaster.pid left; pg_control out of recovery), rather than
 * at pg_ctl's next look. pg_ctl runs on to its own end; its failure is the answer when it
 * comes first (its timeout), as with plain `pg_ctl -w`.
 */
export async function runPgCtl(
  binDir: string,
  pgdata: string,
  action: PgCtlAction,
  args: readonly string[],
  options: RunAsOptions,
): Promise<void> {
  // Nothing to stop, or a server out of recovery already: pg_ctl's answer is the answer.
  const early =
    action === 'stop'
      ? (await readPostmasterStatus(pgdata)) !== undefined
      : !(await inProduction(pgdata));
  const reached = async (): Promise<boolean> => {
    if (!early) return false;
    if (action === 'promote') return inProduction(pgdata);
    return (await readPostmasterStatus(pgdata)) === undefined;
  };
  let ended = false;
  const ctl = runPgTool(binDir, 'pg_ctl', ['-D', pgdata, ...args, '-w', action], options).finally(
    () => (ended = true),
  );
  // Answered early, pg_ctl's end is nobody's to wait for; a failure after it is stale.
  ctl.catch(() => undefined);
  while (!ended) {
    await Promise.race([ctl, delay(LOOK_EVERY_MS)]);
    if (!ended && (await reached())) return;
  }
  await ctl;
}

/** Whether pg_control says the server has left recovery (what `pg_ctl -w promote` waits for). */
async function inProduction(pgdata: string): Promise<boolean> {
  const control = await readFile(join(pgdata, 'global', 'pg_control')).catch(() => undefined);
  return control?.readUInt32LE(CONTROL_STATE_OFFSET) === DB_IN_PRODUCTION;
}
