import { randomBytes } from 'node:crypto';
import { access, appendFile, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { SERVER_CONF_FILE } from './conf-files.js';
import type { OsUser } from './os-user.js';
import { fsyncPath, runPgTool } from './os-user.js';
import { runPgCtl } from './pg-ctl.js';
import { startPostmaster } from './postmaster.js';
import { removeLocksOfZombies } from './postmaster-lock.js';
import type { SocketAddress } from './socket-session.js';
import { answers, SUPERUSER } from './socket-session.js';

/** A PostgreSQL cluster on this host, run as the OS user. */
export interface LocalCluster {
  pgdata: string;
  /** The server's stderr, read back when a start fails. */
  logFile: string;
  address: SocketAddress;
}

/** What running PostgreSQL's binaries takes: where they are and whom they run as. */
export interface PgTools {
  binDir: string;
  osUser: OsUser;
  /** Kills the tool running when aborted, and stops before the next (a job that lost its lease). */
  signal?: AbortSignal;
}

// After a kill -9, the old server's children hold its shared memory for a moment and a
// new postmaster refuses to start until they are gone: retry a few times.
const START_ATTEMPTS = 5;
const START_RETRY_MS = 300;
const PG_CTL_TIMEOUT_SECONDS = '60';
const START_TIMEOUT_MS = 60_000;
const LOG_LINES_IN_ERRORS = 6;

/**
 * Makes a cluster with initdb at `pgdata`, once. initdb writes into a private directory
 * that is renamed into place, so a crash leaves no half-made cluster and, of two builders
 * at once, the first rename wins and the other discards its copy. The cluster's
 * postgresql.conf includes SERVER_CONF_FILE last, strictly: a server whose own settings
 * are missing fails to start rather than coming up on PostgreSQL's defaults.
 */
export async function ensureCluster(pgdata: string, tools: PgTools): Promise<void> {
  if (await isCluster(pgdata)) return;
  const building = `${pgdata}.building-${randomBytes(6).toString('hex')}`;
  const { binDir, osUser, signal } = tools;
  try {
    await runPgTool(binDir, 'initdb', initdbArgs(building), { osUser, signal });
    await appendFile(
      `${building}/postgresql.conf`,
      `\n# pgcloud: this server's own settings, last so that they win.\ninclude '${SERVER_CONF_FILE}'\n`,
    );
    // initdb ran with --no-sync: one sync after our change covers both.
    await runPgTool(binDir, 'initdb', ['--sync-only', `--pgdata=${building}`], { osUser, signal });
    await rename(building, pgdata).catch(async (err: NodeJS.ErrnoException) => {
      if (!(err.code === 'ENOTEMPTY' || err.code === 'EEXIST') || !(await isCluster(pgdata)))
        throw err;
    });
    await fsyncPath(dirname(pgdata));
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

function initdbArgs(pgdata: string): string[] {
  return [
    `--pgdata=${pgdata}`,
    `--username=${SUPERUSER}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--encoding=UTF8',
    '--locale=C.UTF-8',
    '--data-checksums',
    '--no-sync',
  ];
}

/** True when `dir` holds a cluster (initdb's PG_VERSION). */
export async function isCluster(dir: string): Promise<boolean> {
  return exists(join(dir, 'PG_VERSION'));
}

/**
 * Starts the cluster (startPostmaster: no shell) and waits until it accepts connections.
 * A start that fails is retried a few times (stale locks of a killed server); in the end
 * the error carries the tail of the server's log, which says why.
 */
export async function startCluster(cluster: LocalCluster, tools: PgTools): Promise<void> {
  const { pgdata, logFile, address } = cluster;
  const { signal } = tools;
  for (let attempt = 1; ; attempt += 1) {
    try {
      signal?.throwIfAborted();
      await removeLocksOfZombies(lockFiles(cluster));
      await startPostmaster(pgdata, {
        binDir: tools.binDir,
        osUser: tools.osUser,
        logFile,
        timeoutMs: START_TIMEOUT_MS,
        ...(signal ? { signal } : {}),
      });
      return;
    } catch (err) {
      if (signal?.aborted) throw err;
      // Someone else (a concurrent call) may have started it meanwhile.
      if (await answers(address)) return;
      if (attempt >= START_ATTEMPTS) {
        const log = await logTail(logFile);
        throw new Error(`${(err as Error).message}\nserver log:\n${log}`);
      }
      await delay(START_RETRY_MS * attempt, undefined, { signal });
    }
  }
}

/**
 * Stops the cluster (fast shutdown: sessions are ended, the data is kept). One that is
 * not running is fine; one that still answers after a failed stop is an error, so the
 * caller never removes files from under a live server.
 */
export async function stopCluster(
  cluster: Pick<LocalCluster, 'pgdata'> & { address?: SocketAddress },
  tools: PgTools,
): Promise<void> {
  const args = ['-m', 'fast', '-t', PG_CTL_TIMEOUT_SECONDS];
  try {
    // pg_ctl stop would wait its whole timeout for a zombie to remove its pid file.
    await removeLocksOfZombies([join(cluster.pgdata, 'postmaster.pid')]);
    await runPgCtl(tools.binDir, cluster.pgdata, 'stop', args, {
      osUser: tools.osUser,
      signal: tools.signal,
    });
  } catch (err) {
    if (tools.signal?.aborted) throw err;
    // No postmaster.pid, or a stale one after a kill -9: already stopped, as wanted.
    if (cluster.address && (await answers(cluster.address))) throw err;
  }
}

// The data directory's lock and the socket's: a new postmaster checks both.
function lockFiles(cluster: LocalCluster): string[] {
  const { socketDir, port } = cluster.address;
  return [join(cluster.pgdata, 'postmaster.pid'), join(socketDir, `.s.PGSQL.${port}.lock`)];
}

async function logTail(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '(no log)');
  return text.trim().split('\n').slice(-LOG_LINES_IN_ERRORS).join('\n');
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
