import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { OsUser } from '@pgcloud/postgres';
import {
  assertReachable,
  ensureOwnedDir,
  pgBinDir,
  resolveOsUser,
  runPgTool,
} from '@pgcloud/postgres';
import { freePort } from '@pgcloud/testing';
import { stopLocalServers } from '@pgcloud/devstack';
import pg from 'pg';

/** Makes throwaway PostgreSQL clusters by hand, the way one would without pgcloud. */
export interface Baseline {
  /** Milliseconds from initdb to the answered `SELECT 1` of one new cluster, then removes it. */
  timeOne(index: number): Promise<number>;
  /** Stops whatever cluster is still running and removes every file of the baseline. */
  close(): Promise<void>;
}

/** One cluster's files, all under a directory of its own. */
interface ClusterPaths {
  dir: string;
  pgdata: string;
  socketDir: string;
  logFile: string;
}

/**
 * Prepares a temp directory for the clusters. mkdtemp makes it 0700 and ours; PostgreSQL's
 * OS user must pass through it to its cluster's own directory, so it becomes 0755.
 */
export async function openBaseline(osUserName: string): Promise<Baseline> {
  const osUser = await resolveOsUser(osUserName);
  // The same binaries as the provisioner's servers.
  const binDir = pgBinDir(process.env['PG_BIN_DIR']);
  const root = await mkdtemp(join(tmpdir(), 'pgcloud-bench-'));
  const close = async (): Promise<void> => {
    await stopLocalServers(root, osUserName);
    await rm(root, { recursive: true, force: true });
  };
  try {
    await chmod(root, 0o755);
    await assertReachable(root, osUser, 'TMPDIR');
  } catch (err) {
    await close();
    throw err;
  }
  return {
    timeOne: (index) => timeCluster(join(root, String(index)), binDir, osUser),
    close,
  };
}

async function timeCluster(dir: string, binDir: string, osUser: OsUser): Promise<number> {
  const paths: ClusterPaths = {
    dir,
    pgdata: join(dir, 'pgdata'),
    socketDir: join(dir, 'socket'),
    logFile: join(dir, 'postgresql.log'),
  };
  // Directories and the port are chosen before the clock starts: pgcloud does the like
  // before its server exists too, and neither is what is being compared.
  await ensureOwnedDir(paths.dir, osUser);
  await ensureOwnedDir(paths.socketDir, osUser);
  const port = await freePort();
  try {
    const started = performance.now();
    await initAndStart(paths, port, binDir, osUser);
    const answered = await firstAnswer(paths.socketDir, port, osUser.name);
    return answered - started;
  } finally {
    await stopCluster(paths, binDir, osUser);
    await rm(paths.dir, { recursive: true, force: true });
  }
}

/** A plain initdb (its defaults, fsync included), then pg_ctl start on the socket dir. */
async function initAndStart(
  paths: ClusterPaths,
  port: number,
  binDir: string,
  osUser: OsUser,
): Promise<void> {
  await runPgTool(binDir, 'initdb', ['-D', paths.pgdata], { osUser });
  // -l: the server must not inherit our pipes, or pg_ctl's output would never close.
  const serverOptions = `-p ${port} -k '${paths.socketDir}'`;
  const args = ['-D', paths.pgdata, '-l', paths.logFile, '-o', serverOptions, '-w', 'start'];
  await runPgTool(binDir, 'pg_ctl', args, { osUser });
}

/**
 * Connects over the socket as the superuser initdb made (named after the OS user) and
 * answers when `SELECT 1` came back; closing the connection is not part of the time.
 */
async function firstAnswer(socketDir: string, port: number, user: string): Promise<number> {
  const client = new pg.Client({ host: socketDir, port, user, database: 'postgres' });
  await client.connect();
  try {
    await client.query('SELECT 1');
    return performance.now();
  } finally {
    await client.end();
  }
}

/**
 * Immediate stop: the data is thrown away, so a clean shutdown would be wasted. A cluster
 * without postmaster.pid never started; a failed stop throws, so no files go from under
 * a running server.
 */
async function stopCluster(paths: ClusterPaths, binDir: string, osUser: OsUser): Promise<void> {
  if (!existsSync(join(paths.pgdata, 'postmaster.pid'))) return;
  const args = ['-D', paths.pgdata, '-m', 'immediate', '-w', 'stop'];
  await runPgTool(binDir, 'pg_ctl', args, { osUser });
}
