import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { OsUser } from '@pgcloud/postgres';
import { chownFile, ensureOwnedDir } from '@pgcloud/postgres';
import type { RestoreSegment } from '../database-driver.js';
import { BrokenWalError } from '../database-driver.js';
import type { SpoolJob, SpoolMessage, SpoolOrder } from './spool-worker.js';

// Segments fetched at once: S3 answers each in about 0.3 s, replay eats one in 0.1 s.
const PARALLEL_FETCHES = 8;
// Segments fetched while the base backup comes down (512 MiB): the rest wait until it is
// in. Fetched beside it, all of a restore's WAL took the cores its extraction needed (at
// 1 GB and 3.2 GB of WAL: 9.6 s to download and extract, against 3 s alone), and replay,
// which takes one core, leaves the other to the fetches.
const HEAD_START_SEGMENTS = 32;
// Segments fetched ahead of replay, at most, once the base backup is in: replay asks for one
// every 0.1 s or so, a fetch takes 0.3 s. Decompressing as fast as it could beside replay,
// the spool wrote the page cache on the other core all along, and replay's own process took
// 1.37x to 1.49x pgBackRest's CPU for the same WAL, the difference in the kernel's copies
// into the page cache (bench/results/2026-11-29-pitr-4.md); held 16 ahead, 1.12x in a trial.
const AHEAD_SEGMENTS = 16;
// A segment's fetch that takes longer has stalled: it fails (and the restore with it, to be
// tried again) rather than keep recovery waiting for it until the job's lease is lost.
const SEGMENT_FETCH_TIMEOUT_MS = 120_000;
// How often restore_command looks whether the segment it waits for has come in.
const WAIT_SECONDS = 0.05;
// restore_command's exit status when a fetch failed: above 125, recovery aborts (FATAL)
// instead of taking the missing segment for the end of the archive and promoting early.
const ABORT_RECOVERY = 255;

/** The files of a spool, beside the segments themselves (named as PostgreSQL asks). */
export function spoolFiles(dir: string) {
  return {
    /** One empty file per planned segment still on its way, removed once it is in. */
    pendingDir: join(dir, 'pending'),
    /** Present once a fetch failed: a waiting restore_command aborts recovery. */
    failedMark: join(dir, 'failed'),
    /** restore_command's script. */
    script: join(dir, 'restore-wal.sh'),
    /** Each file the recovering server copied in, a line each: replay's progress. */
    replayLog: join(dir, 'replayed.log'),
  };
}

/** How a spool's fetches are paced (the constants above unless a spec says otherwise). */
export interface SpoolPace {
  fetchTimeoutMs: number;
  headStart: number;
  ahead: number;
}

/** A spool being filled while recovery reads from it. */
export interface WalSpool {
  /** restore_command: the segment once it is in (waiting for it), never one unplanned. */
  restoreCommand: string;
  /** The first fetch that failed, once one has; undefined while none has. */
  failure(): Error | undefined;
  /** The base backup is in: the fetches go on past their head start. */
  baseIsIn(): void;
  /**
   * Stops the fetches still going (recovery is over, or the build failed) and waits until
   * they have; a restore_command still waiting then fails.
   */
  stop(): Promise<void>;
}

/**
 * Starts fetching a point-in-time restore's WAL segments into `dir`, 8 at a time and in
 * order, and answers at once: the first `headStart` while the base backup comes down, the
 * rest once baseIsIn() says it is in, so recovery replays while the later segments come
 * down (fetching inside restore_command is several times slower than replay), never more
 * than `ahead` past the last one recovery asked for.
 * Each segment is written under a temporary name, checked and renamed, so restore_command
 * copies only whole segments; it waits for a planned segment not in yet, fails at once for
 * any other file (not in the archive), and aborts recovery once a fetch has failed (or
 * taken longer than `fetchTimeoutMs`: stalled). The
 * segment that was still being written is padded with zeros to a whole segment, as
 * pg_receivewal keeps it: replay ends where its data ends.
 *
 * The fetches run in a thread of their own (spool-worker.ts): in the app's heap, the
 * segments' buffers set off a full mark-compact of it several times a second while they
 * came down, and marking it took a good part of the core replay leaves to the fetches.
 */
export async function startWalSpool(
  segments: readonly RestoreSegment[],
  dir: string,
  osUser: OsUser,
  signal?: AbortSignal,
  pace: Partial<SpoolPace> = {},
): Promise<WalSpool> {
  const {
    fetchTimeoutMs = SEGMENT_FETCH_TIMEOUT_MS,
    headStart = HEAD_START_SEGMENTS,
    ahead = AHEAD_SEGMENTS,
  } = pace;
  for (const segment of segments)
    if (!/^[0-9A-F]{24}$/.test(segment.name)) throw new Error(`not a WAL segment: ${segment.name}`);
  const files = spoolFiles(dir);
  // An earlier attempt's marks must not speak for this one.
  await rm(files.failedMark, { force: true });
  await rm(files.replayLog, { force: true });
  await ensureOwnedDir(dir, osUser);
  await ensureOwnedDir(files.pendingDir, osUser);
  for (const segment of segments) await writeFile(join(files.pendingDir, segment.name), '');
  await writeFile(files.script, restoreScript(dir), { mode: 0o600 });
  await chownFile(files.script, osUser);

  const markFailed = () => writeFile(files.failedMark, '').catch(() => undefined);
  let failure: Error | undefined;
  let stopping = false;
  const job: SpoolJob = {
    // The segment still being written first: its pieces are the objects the archive removes
    // once the segment is complete and stored otherwise; the rest in replay's order.
    queue: [...segments.filter((s) => s.partial), ...segments.filter((s) => !s.partial)],
    dir,
    pendingDir: files.pendingDir,
    replayLog: files.replayLog,
    osUser,
    parallel: PARALLEL_FETCHES,
    headStart,
    ahead,
    fetchTimeoutMs,
  };
  const worker = new Worker(new URL('./spool-worker.js', import.meta.url), { workerData: job });
  const order = (message: SpoolOrder) => worker.postMessage(message);
  // Settled once every fetch has ended (or the thread has): stop() waits for that.
  const settled = new Promise<void>((resolve) => {
    const failed = (err: Error) => {
      // The failure first, then the mark: a restore_command the mark aborts finds it told.
      if (!stopping) failure ??= err;
      void markFailed();
    };
    worker.on('message', (message: SpoolMessage) => {
      if (message.kind === 'settled') return resolve();
      const err =
        message.name === 'BrokenWalError'
          ? new BrokenWalError(message.message)
          : Object.assign(new Error(message.message), { name: message.name });
      failed(err);
    });
    worker.once('error', failed);
    worker.once('exit', () => resolve());
  });
  const abort = () => order({ kind: 'abort' });
  if (signal?.aborted) abort();
  else signal?.addEventListener('abort', abort, { once: true });
  return {
    // The spool gone (and its script with it) aborts recovery too, rather than ending it.
    restoreCommand: `test -f ${files.script} || exit ${ABORT_RECOVERY}; sh ${files.script} %f %p`,
    failure: () => failure,
    baseIsIn: () => order({ kind: 'base-is-in' }),
    stop: async () => {
      stopping = true;
      signal?.removeEventListener('abort', abort);
      order({ kind: 'stop' });
      await settled;
      await worker.terminate();
      await markFailed();
    },
  };
}

/**
 * restore_command as a script: arguments %f and %p. Exit 1 means "not in the archive" to
 * PostgreSQL, which then ends recovery there: it is answered only for a file that was not
 * planned. A planned segment's pending file goes only after the segment was renamed in, so
 * "not pending and not in" means "not planned". Anything else that goes wrong (a fetch, the
 * copy, the spool gone) aborts recovery instead.
 */
function restoreScript(dir: string): string {
  const files = spoolFiles(dir);
  return [
    '#!/bin/sh',
    '# pgcloud restore_command: a WAL file from the spool that the restore fills meanwhile.',
    `spool='${dir}'`,
    'while [ ! -f "$spool/$1" ]; do',
    `  [ -d '${files.pendingDir}' ] || exit ${ABORT_RECOVERY}`,
    `  [ -f '${files.failedMark}' ] && exit ${ABORT_RECOVERY}`,
    `  [ -f '${files.pendingDir}/'"$1" ] || [ -f "$spool/$1" ] || exit 1`,
    `  sleep ${WAIT_SECONDS}`,
    'done',
    // A hard link where it can (the spool beside the data): recovery waits for this command,
    // and copying 16 MiB took about as long as replaying it. PostgreSQL only reads the file,
    // renames it and removes it; the spool's own name keeps the segment for a second start.
    `ln -f "$spool/$1" "$2" 2>/dev/null || cp "$spool/$1" "$2" || exit ${ABORT_RECOVERY}`,
    `echo "$1" >> '${files.replayLog}' || true`,
    'exit 0',
    '',
  ].join('\n');
}
