import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { LSN_PATTERN } from '@pgcloud/contracts';
import type { SocketAddress } from '@pgcloud/postgres';
import { parseLsn, segmentOf, withSuperuser } from '@pgcloud/postgres';
import type { RecoveryTarget } from '../database-driver.js';
import { spoolFiles } from './wal-spool.js';

const PROMOTE_TIMEOUT_MS = 60 * 60_000;
const TARGET_NOT_REACHED = 'recovery ended before configured recovery target was reached';
const SQL_TIMEOUT_MS = 10_000;
// Replay's end is looked for this often once the server takes sessions (a hot standby),
// in one session: each tenth of a second waited costs the restore as much. A login a look
// forked a backend each time, about 10 a second, and on a 2-core virtual machine those
// took 34 of a 1 GB restore's 115 CPU s while replay waited for a core. While the server
// takes no session, a refused login forks a backend and logs a line: less often.
const PROMOTION_LOOK_EVERY_MS = 20;
const REFUSED_LOOK_EVERY_MS = 100;
/** SQLSTATE cannot_connect_now: the server is up but still recovering, not a hot standby. */
const CANNOT_CONNECT_NOW = '57P03';

/** How recover() drives the checking server. */
export interface RecoveryControl {
  /**
   * Starts the server to recover with these settings (recovery-settings.ts writes them
   * into its data directory's configuration), and answers once it is up.
   */
  start: (recovery: Readonly<Record<string, string>>) => Promise<unknown>;
  /** Stops it (pg_ctl -m mode). */
  stop: (mode: string) => Promise<unknown>;
  /** The server's socket, for the promotion check. */
  address: SocketAddress;
  /** The server's log: whether recovery ended before its target is read there. */
  logFile: string;
  /** Stops the wait for promotion (a cancelled restore, a lost lease): recover() rejects. */
  signal?: AbortSignal;
}

/** Replay beyond the backup: where it stops, and the restore_command that feeds it. */
export interface Replay {
  target: RecoveryTarget;
  restoreCommand: string;
}

/**
 * Recovers and promotes: to the end of the backup; or through the archived WAL to the
 * target, inclusive. PostgreSQL reaches a time target only on a commit after it: when the
 * archive holds none (a target after the last commit of an idle database), it stops with
 * FATAL at the end of the WAL. Every commit in that WAL is then at or before the target,
 * so recovery starts again without one and replays it all. The same holds for a WAL
 * position the archive ends at: everything before it is there.
 *
 * The server is left as it is when recover() rejects: stopping it is the caller's cleanup.
 */
export async function recover(control: RecoveryControl, replay: Replay | undefined): Promise<void> {
  const { start, stop, address, signal } = control;
  signal?.throwIfAborted();
  if (!replay) {
    await start({
      restore_command: '/bin/false',
      recovery_target: 'immediate',
      recovery_target_action: 'promote',
    });
    return waitForPromotion(address, signal);
  }
  const fetch = { restore_command: replay.restoreCommand };
  try {
    await start({
      ...fetch,
      ...recoveryTargetSettings(replay.target),
      recovery_target_inclusive: 'on',
      recovery_target_action: 'promote',
    });
    await waitForPromotion(address, signal);
  } catch (err) {
    // Cancelled: that is the reason, whatever the server did meanwhile.
    signal?.throwIfAborted();
    const log = await readFile(control.logFile, 'utf8').catch(() => '');
    if (!log.includes(TARGET_NOT_REACHED)) throw err;
    await stop('immediate').catch(() => undefined);
    await start(fetch);
    await waitForPromotion(address, signal);
  }
}

/**
 * Tells `report` how many of the planned segments recovery has replayed, every
 * `everyMs` until stopped: those the server fetched, less the one it is replaying.
 */
export function watchReplay(
  walSpoolDir: string,
  planned: readonly string[],
  report: (segments: number) => void,
  everyMs = 500,
): () => void {
  const names = new Set(planned);
  const read = async () => {
    const log = await readFile(spoolFiles(walSpoolDir).replayLog, 'utf8').catch(() => '');
    const fetched = new Set(log.split('\n').filter((name) => names.has(name)));
    if (fetched.size > 0) report(fetched.size - 1);
  };
  const timer = setInterval(() => void read(), everyMs);
  return () => clearInterval(timer);
}

// The grammars this app checks a target by again, whoever planned it: a UTC time as plans
// write it, a WAL position, a restore point's name as the database name rules allow it.
const TARGET_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const RESTORE_POINT = /^[a-z][a-z0-9_-]*$/;

/**
 * The target, once checked by its kind's own grammar: it reaches the server's command
 * line, so nothing else (quotes, `$(...)`, newlines) may. Throws, saying which rule it
 * breaks; the restore checks its plan's target with it before it writes anything.
 */
export function checkedRecoveryTarget(target: RecoveryTarget): RecoveryTarget {
  if ('time' in target) {
    if (!TARGET_TIME.test(target.time) || Number.isNaN(Date.parse(target.time)))
      throw new Error('a recovery target time must be a UTC ISO 8601 time');
  } else if ('lsn' in target) {
    if (!LSN_PATTERN.test(target.lsn))
      throw new Error('a recovery target WAL position must read like 0/3000148');
  } else if (!RESTORE_POINT.test(target.restorePoint))
    throw new Error('a restore point name must follow the database name rules');
  return target;
}

/** The recovery_target_* setting for a target, checked again (checkedRecoveryTarget). */
export function recoveryTargetSettings(target: RecoveryTarget): Record<string, string> {
  const checked = checkedRecoveryTarget(target);
  if ('time' in checked) return { recovery_target_time: postgresTime(checked.time) };
  if ('lsn' in checked) return { recovery_target_lsn: checked.lsn };
  return { recovery_target_name: checked.restorePoint };
}

/** A UTC ISO 8601 time as PostgreSQL reads it: a numeric offset, not `Z`. */
export function postgresTime(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '+00:00');
}

/** Where replay of the extracted backup begins (its backup_label). */
export async function backupStartLsn(dataDir: string): Promise<bigint> {
  const label = await readFile(join(dataDir, 'backup_label'), 'utf8');
  const match = /^START WAL LOCATION: ([0-9A-F]+\/[0-9A-F]+)/m.exec(label);
  if (!match?.[1]) throw new Error('the backup has no start WAL location in its backup_label');
  return parseLsn(match[1]);
}

/**
 * The segments replay went through: from the backup's start to where recovery stopped,
 * which the new timeline's history file records as its switch point.
 */
export async function segmentsReplayed(dataDir: string, start: bigint): Promise<number> {
  const walDir = join(dataDir, 'pg_wal');
  const histories = (await readdir(walDir)).filter((f) => /^[0-9A-F]{8}\.history$/.test(f)).sort();
  const newest = histories.at(-1);
  if (!newest) throw new Error('the restored server has no new timeline');
  const lines = (await readFile(join(walDir, newest), 'utf8')).trim().split('\n');
  const switchPoint = lines.at(-1)?.split(/\s+/)[1];
  if (!switchPoint) throw new Error(`the timeline history ${newest} has no switch point`);
  return Number(segmentOf(parseLsn(switchPoint)) - segmentOf(start)) + 1;
}

/**
 * pg_ctl -w returns once the server reads (a hot standby) or once it runs in recovery at
 * all (no hot standby: it takes no session until recovery ends); promotion (a new
 * timeline) comes after. A server that stopped fails the session, and so this wait; an
 * aborted `signal` stops it at the next look.
 */
async function waitForPromotion(address: SocketAddress, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + PROMOTE_TIMEOUT_MS;
  const giveUpPast = () => {
    signal?.throwIfAborted();
    if (Date.now() > deadline) throw new Error('the restored server did not finish recovery');
  };
  for (;;) {
    giveUpPast();
    const promoted = await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
      for (;;) {
        const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
        if (rows[0]?.r === false) return true;
        giveUpPast();
        await delay(PROMOTION_LOOK_EVERY_MS);
      }
    }).catch((err: { code?: string }) => {
      if (err.code !== CANNOT_CONNECT_NOW) throw err;
      return false;
    });
    if (promoted) return;
    await delay(REFUSED_LOOK_EVERY_MS);
  }
}
