import { spawn } from 'node:child_process';
import { chown, open } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { OsUser } from './os-user.js';
import { BASE_ENV } from './os-user.js';
import { readPostmasterStatus } from './pg-ctl.js';

// A server here starts in about 40 ms: its postmaster.pid is looked at this often.
const LOOK_EVERY_MS = 10;
// A started server: accepting connections (a hot standby too), or a standby that takes none.
const UP = ['ready', 'standby'];

/** How a server is started. */
export interface PostmasterStart {
  binDir: string;
  osUser: OsUser;
  /** The server's stdout and stderr are appended here (what `pg_ctl -l` did). */
  logFile: string;
  /** `-c name=value` settings over its configuration files, one argument each. */
  settings?: Readonly<Record<string, string | number>>;
  /** How long it may take to come up (default 60 s); past it, the start has failed. */
  timeoutMs?: number;
  /** Stops the wait (the server is left as it is, for the caller's cleanup to stop). */
  signal?: AbortSignal;
}

/**
 * Starts `postgres -D pgdata` as the OS user and answers once it is up (taking
 * connections, or a standby taking none), as `pg_ctl -w start` would, but from an argument
 * vector: pg_ctl starts the server through /bin/sh, where a setting's value would be read
 * as shell. The server runs in a session of its own, with only the environment PostgreSQL
 * needs (BASE_ENV), so it outlives this process; stop it with pg_ctl stop. Fails with the
 * server's exit status when it exits while starting (its log says why).
 */
export async function startPostmaster(pgdata: string, start: PostmasterStart): Promise<void> {
  const { binDir, osUser, signal } = start;
  signal?.throwIfAborted();
  const args = ['-D', pgdata];
  for (const [name, value] of Object.entries(start.settings ?? {})) {
    if (!/^[a-z_][a-z0-9_.]*$/.test(name)) throw new Error(`not a setting name: ${name}`);
    args.push('-c', `${name}=${value}`);
  }
  const log = await open(start.logFile, 'a', 0o600);
  let exited: string | undefined;
  try {
    if (osUser.switchUser) await chown(start.logFile, osUser.uid, osUser.gid);
    const child = spawn(join(binDir, 'postgres'), args, {
      cwd: '/',
      env: { ...BASE_ENV },
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      ...(osUser.switchUser ? { uid: osUser.uid, gid: osUser.gid } : {}),
    });
    child.once('error', (err) => (exited = `postgres could not run: ${err.message}`));
    child.once('exit', (code, killedBy) => {
      exited = `postgres ${code === null ? `was killed by ${killedBy}` : `exited with code ${code}`} while starting`;
    });
    // It is not ours to wait for: it ends when pg_ctl stop (or a crash) ends it.
    child.unref();
    const deadline = Date.now() + (start.timeoutMs ?? 60_000);
    for (;;) {
      if (exited !== undefined) throw new Error(exited);
      const status = await readPostmasterStatus(pgdata);
      if (status && status.pid === child.pid && UP.includes(status.status)) return;
      if (Date.now() > deadline)
        throw new Error(`postgres did not come up within ${(start.timeoutMs ?? 60_000) / 1000} s`);
      signal?.throwIfAborted();
      await delay(LOOK_EVERY_MS);
    }
  } finally {
    await log.close();
  }
}
