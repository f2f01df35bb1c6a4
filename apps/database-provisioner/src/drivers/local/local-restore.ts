import { copyFile, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser, PgTools } from '@pgcloud/postgres';
import { chownFile, fsyncPath, SERVER_CONF_FILE } from '@pgcloud/postgres';
import type { RestoreOutcome, RestoreSpec } from '../database-driver.js';
import { pgCtl } from '../restore-build/pg-ctl.js';
import { autoConf, buildRestoredData, writeOwned } from '../restore-build/restored-data.js';
import { markHeld } from './restore-hold.js';
import type { RestorePaths } from './restore-paths.js';
import { CHECKED_MARKER, restorePaths } from './restore-paths.js';
import type { ServerPaths } from './server-paths.js';
import { exists } from './local-files.js';

/** What a local restore needs of the driver. */
export interface LocalRestoreContext {
  tools: PgTools;
  host: string;
  listenAddress: string;
  caPem: string;
}

// The live server's own files win over the archive's: its port, certificate, access rules.
const CONF_FILES = ['postgresql.conf', SERVER_CONF_FILE, 'pg_hba.conf', 'pg_ident.conf'];
// ALTER SYSTEM settings of the backup's time do not carry over. The restored server starts
// read-only, and on hold (restore-hold.ts): a swap can still be undone until the job has
// checked it and opens it up.
const RESTORED_AUTO_CONF = autoConf(["default_transaction_read_only = 'on'"]);

/**
 * Builds restored data beside a server's live data and checks it (download with its
 * checksum, recovery to the end of the backup, promotion to a new timeline, the
 * database's names and passwords, a TLS login on a spare port), before any swap. The
 * checking server runs on the live server's settings; the checked data is marked to start
 * held, and with this restore's id.
 */
export async function buildRestore(
  server: ServerPaths,
  spec: RestoreSpec,
  context: LocalRestoreContext,
): Promise<RestoreOutcome> {
  const paths = restorePaths(server);
  const { osUser } = context.tools;
  await discardBuild(paths, context.tools);
  const buildPaths = {
    dataDir: paths.restoreDir,
    socketDir: paths.socketDir,
    walSpoolDir: paths.walSpoolDir,
    logFile: paths.logFile,
  };
  return buildRestoredData(buildPaths, spec, {
    ...context,
    configure: async (dataDir) => {
      // A new database's server may still be being made: its files are what is copied.
      await spec.serverMade;
      for (const file of CONF_FILES)
        await copyOwned(join(server.pgdata, file), join(dataDir, file), osUser);
      await writeOwned(join(dataDir, 'postgresql.auto.conf'), RESTORED_AUTO_CONF, osUser);
    },
    seal: async (dataDir) => {
      // Swapped in, it starts on hold: nothing is written to it until the job has checked it.
      await markHeld(dataDir, osUser);
      await writeOwned(join(dataDir, CHECKED_MARKER), spec.restoreId, osUser);
      await fsyncPath(dataDir);
    },
  });
}

/**
 * The swap, in steps that a crash can interrupt anywhere: live data to `previous`, the
 * checked restore to `pgdata`. Called again, it carries on from where it stopped.
 * Answers false when there is nothing to swap in.
 */
export async function swapRestored(
  server: ServerPaths,
  restoreId: string,
  stopLive: () => Promise<void>,
): Promise<boolean> {
  const paths = restorePaths(server);
  const checkedBeside = await checkedFor(paths.restoreDir, restoreId);
  if (await checkedFor(server.pgdata, restoreId)) return true; // swapped already
  if (!checkedBeside) return false;
  if (!(await exists(paths.previousDir))) {
    await stopLive();
    await rename(server.pgdata, paths.previousDir);
  } else if (await exists(server.pgdata)) {
    // Only the restored data is ever renamed to pgdata, and it carries the marker.
    throw new Error(`${server.pgdata} and ${paths.previousDir} both hold data`);
  }
  await rename(paths.restoreDir, server.pgdata);
  await fsyncPath(server.serverDir);
  return true;
}

/** Whether this restore's data is in place (or half swapped in). */
export async function isSwapped(server: ServerPaths, restoreId: string): Promise<boolean> {
  const paths = restorePaths(server);
  return (
    (await checkedFor(server.pgdata, restoreId)) ||
    ((await exists(paths.previousDir)) && (await checkedFor(paths.restoreDir, restoreId)))
  );
}

/** Whether `dir` holds data checked for this restore: the marker names the restore. */
async function checkedFor(dir: string, restoreId: string): Promise<boolean> {
  const marker = await readFile(join(dir, CHECKED_MARKER), 'utf8').catch(() => undefined);
  return marker === restoreId;
}

/**
 * The restore is checked in place: the old data and the restore's leftovers go. The old
 * data is first renamed whole out of `previous`, so a crash mid-removal never leaves a
 * partial directory that an undo could bring back. Answers once it is out of the way;
 * `removed` settles once its files are gone, which for a large data directory takes a
 * while that nobody needs to wait for (a removal cut short is redone by the next finish,
 * or by a destroy).
 */
export async function finishRestore(
  server: ServerPaths,
  tools: PgTools,
): Promise<{ removed: Promise<void> }> {
  const paths = restorePaths(server);
  if (await exists(paths.previousDir)) {
    await removeOldData(server);
    await rename(paths.previousDir, paths.trashDir);
    await fsyncPath(server.serverDir);
  }
  await discardBuild(paths, tools);
  // The marker stays, naming this restore: a retry from here on finishes it again instead of
  // building it afresh over writes already taken. Another restore does not take it for its
  // own, and its swap moves it out with the rest of the old data.
  return { removed: removeOldData(server) };
}

/** Removes old data a finished restore set aside (nothing else is ever in the trash). */
export async function removeOldData(server: ServerPaths): Promise<void> {
  await rm(restorePaths(server).trashDir, { recursive: true, force: true });
}

/**
 * Undoes a restore: the built data goes, and old data kept by a swap comes back. Answers
 * whether the live data was swapped back (the caller then starts it).
 */
export async function undoRestore(
  server: ServerPaths,
  tools: PgTools,
  stopLive: () => Promise<void>,
): Promise<boolean> {
  const paths = restorePaths(server);
  await discardBuild(paths, tools);
  if (!(await exists(paths.previousDir))) return false;
  if (await exists(server.pgdata)) {
    await stopLive();
    await rm(server.pgdata, { recursive: true, force: true });
  }
  await rename(paths.previousDir, server.pgdata);
  await fsyncPath(server.serverDir);
  return true;
}

/** Stops a checking server left by a crash and removes the build (before a destroy too). */
export async function discardRestoreBuild(server: ServerPaths, tools: PgTools): Promise<void> {
  await discardBuild(restorePaths(server), tools);
}

async function discardBuild(paths: RestorePaths, tools: PgTools): Promise<void> {
  if (await exists(join(paths.restoreDir, 'postmaster.pid'))) {
    await pgCtl(tools, paths.restoreDir, 'stop', ['-m', 'immediate', '-t', '60']).catch(
      () => undefined,
    );
  }
  await rm(paths.restoreDir, { recursive: true, force: true });
  await rm(paths.socketDir, { recursive: true, force: true });
  await rm(paths.walSpoolDir, { recursive: true, force: true });
}

async function copyOwned(from: string, to: string, osUser: OsUser): Promise<void> {
  await copyFile(from, to);
  await chownFile(to, osUser);
}
