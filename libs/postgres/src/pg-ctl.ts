import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { RunAsOptions } from './os-user.js';
import { runPgTool } from './os-user.js';

/** What pg_ctl is asked to do and wait for. */
export type PgCtlAction = 'start' | 'stop' | 'promote';

// pg_ctl -w looks every 100 ms; a server here starts in about 40 ms and stops in about 20,
// so most of each wait was pg_ctl's sleep.
const LOOK_EVERY_MS = 10;
// postmaster.pid's lines (PostgreSQL's LOCK_FILE_LINE_*, counted from 0).
const PID_LINE = 0;
const START_TIME_LINE = 2;
const STATUS_LINE = 7;
// A started server: accepting connections (a hot standby too), or a standby that takes none.
const UP = ['ready', 'standby'];
// pg_control's DBState, a uint32 after the system identifier and two version numbers (the
// layout pg_ctl reads too): DB_IN_PRODUCTION once recovery has ended.
const CONTROL_STATE_OFFSET = 16;
const DB_IN_PRODUCTION = 6;
// pg_ctl's own allowance for a start time written just before it looked at the clock.
const START_TIME_SLACK_SECONDS = 2;

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
 * what pg_ctl waits for (postmaster.pid of a postmaster started since this call and up;
 * no postmaster.pid left; pg_control out of recovery), rather than at pg_ctl's next look. pg_ctl runs on to its own
 * end; its failure is the answer when it comes first (a server that exited while starting,
 * its timeout), as with plain `pg_ctl -w`.
 */
export async function runPgCtl(
  binDir: string,
  pgdata: string,
  action: PgCtlAction,
  args: readonly string[],
  options: RunAsOptions,
): Promise<void> {
  const since = Math.floor(Date.now() / 1000) - START_TIME_SLACK_SECONDS;
  // A postmaster.pid already there is another postmaster's (one killed a moment ago leaves
  // its file, and perhaps a zombie, behind): a start is answered only by a new one's.
  const before = await readPostmasterStatus(pgdata);
  // Nothing to stop, or a server out of recovery already: pg_ctl's answer is the answer.
  const early =
    action === 'start' ||
    (action === 'stop' ? before !== undefined : !(await inProduction(pgdata)));
  const reached = async (): Promise<boolean> => {
    if (!early) return false;
    if (action === 'promote') return inProduction(pgdata);
    const found = await readPostmasterStatus(pgdata);
    if (action === 'stop') return found === undefined;
    return (
      !!found &&
      found.pid !== before?.pid &&
      UP.includes(found.status) &&
      alive(found.pid) &&
      found.startTime >= since
    );
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

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // It exists, owned by another user (the OS user, when we are not root).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
