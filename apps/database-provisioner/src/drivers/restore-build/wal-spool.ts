import { createHash } from 'node:crypto';
import { chmod, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser } from '@pgcloud/postgres';
import {
  WAL_SEGMENT_BYTES,
  chownFile,
  ensureOwnedDir,
  zstdDecompressToFile,
} from '@pgcloud/postgres';
import type { RestoreSegment } from '../database-driver.js';
import { BrokenWalError } from '../database-driver.js';
import { fetchBody } from './fetched-body.js';

// Segments fetched at once: S3 answers each in about 0.3 s, replay eats one in 0.1 s.
const PARALLEL_FETCHES = 8;
// Segments fetched while the base backup comes down (512 MiB): the rest wait until it is
// in. Fetched beside it, all of a restore's WAL took the cores its extraction needed (at
// 1 GB and 3.2 GB of WAL: 9.6 s to download and extract, against 3 s alone), and replay,
// which takes one core, leaves the other to the fetches.
const HEAD_START_SEGMENTS = 32;
// The nice value of the spool's decompressions: replay is one process, and 8 of them beside
// it on two cores halved its pace (7 segments a second against 13.5 once the spool was
// done, which was always ahead of it). Niced, they take what replay leaves.
const DECOMPRESS_NICENESS = 10;
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
 * down (platform-facts: fetching inside restore_command is several times slower than replay).
 * Each segment is written under a temporary name, checked and renamed, so restore_command
 * copies only whole segments; it waits for a planned segment not in yet, fails at once for
 * any other file (not in the archive), and aborts recovery once a fetch has failed (or
 * taken longer than `fetchTimeoutMs`: stalled). The
 * segment that was still being written is padded with zeros to a whole segment, as
 * pg_receivewal keeps it: replay ends where its data ends.
 */
export async function startWalSpool(
  segments: readonly RestoreSegment[],
  dir: string,
  osUser: OsUser,
  signal?: AbortSignal,
  fetchTimeoutMs = SEGMENT_FETCH_TIMEOUT_MS,
  headStart = HEAD_START_SEGMENTS,
): Promise<WalSpool> {
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

  const stopped = new AbortController();
  const fetchSignal = signal ? AbortSignal.any([signal, stopped.signal]) : stopped.signal;
  const markFailed = () => writeFile(files.failedMark, '').catch(() => undefined);
  let failure: Error | undefined;
  // The segment still being written first: its pieces are the objects the archive removes
  // once the segment is complete and stored otherwise; the rest in replay's order.
  const queue = [...segments.filter((s) => s.partial), ...segments.filter((s) => !s.partial)];
  let baseIsIn = () => {};
  const baseIn = new Promise<void>((resolve) => (baseIsIn = resolve));
  let taken = 0;
  const worker = async () => {
    for (;;) {
      if (taken >= headStart) await baseIn;
      const next = queue.shift();
      if (!next || stopped.signal.aborted) return;
      taken++;
      await fetchSegment(next, dir, osUser, fetchSignal, fetchTimeoutMs);
      await rm(join(files.pendingDir, next.name));
    }
  };
  // Each worker settles on its own: stop() waits for every one of them, not just the first.
  const fetching = Promise.all(
    Array.from({ length: PARALLEL_FETCHES }, () =>
      worker().catch(async (err: unknown) => {
        if (!stopped.signal.aborted) failure = err instanceof Error ? err : new Error(String(err));
        stopped.abort();
        baseIsIn(); // the workers waiting for it end
        await markFailed();
      }),
    ),
  );
  return {
    // The spool gone (and its script with it) aborts recovery too, rather than ending it.
    restoreCommand: `test -f ${files.script} || exit ${ABORT_RECOVERY}; sh ${files.script} %f %p`,
    failure: () => failure,
    baseIsIn,
    stop: async () => {
      stopped.abort();
      baseIsIn();
      await fetching;
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

async function fetchSegment(
  segment: RestoreSegment,
  dir: string,
  osUser: OsUser,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<void> {
  const path = join(dir, segment.name);
  const fetching = `${path}.part`;
  const timeout = AbortSignal.timeout(timeoutMs);
  const stopped = AbortSignal.any([signal, timeout]);
  const bytes = await segmentBytes(segment, stopped).catch((err: unknown) => {
    if (timeout.aborted && !signal.aborted)
      throw new Error(`WAL segment ${segment.name} did not come down in ${timeoutMs / 1000} s`);
    throw err;
  });
  if (segment.compression === 'zstd') await decompressInto(segment.name, bytes, fetching);
  else await writeWhole(segment, bytes, fetching);
  await chownFile(fetching, osUser);
  await rename(fetching, path);
}

/** A segment stored as is, written whole: the one still being written padded with zeros. */
async function writeWhole(segment: RestoreSegment, bytes: Buffer, path: string): Promise<void> {
  // Short WAL would end replay early and pass for "no commit after the target".
  const expected = segment.partial ? segment.sizeBytes : WAL_SEGMENT_BYTES;
  if (bytes.length < expected)
    throw new BrokenWalError(
      `WAL segment ${segment.name} has ${bytes.length} bytes, not ${expected}`,
    );
  // As pg_receivewal keeps the segment it writes.
  const whole =
    bytes.length < WAL_SEGMENT_BYTES
      ? Buffer.concat([bytes, Buffer.alloc(WAL_SEGMENT_BYTES - bytes.length)])
      : bytes;
  await writeFile(path, whole, { mode: 0o600 });
}

/**
 * A segment's bytes, held in memory (16 MiB at most, or it is refused as it comes): the
 * pieces it was uploaded in one after the other, or the one object a completed segment is
 * stored compressed in, each checked against the MD5 the object store answered when the
 * archive stored it. Read whole, hashed and written in one go, a
 * segment costs about a fifth less CPU than streamed through to its file chunk by chunk.
 */
async function segmentBytes(segment: RestoreSegment, stopped: AbortSignal): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let size = 0;
  for (const [i, url] of segment.urls.entries()) {
    const object = `WAL segment ${segment.name} (object ${i + 1})`;
    const response = await fetchBody(url, stopped);
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) {
      response.destroy();
      // The segment still being written gives up its pieces once it is complete and
      // stored whole: a piece gone is a plan grown old (a retry plans again), not a gap.
      if (status === 404 && !segment.partial)
        throw new BrokenWalError(`${object} is missing from the object store`);
      throw new Error(`${object}: HTTP ${status}`);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > WAL_SEGMENT_BYTES) {
        response.destroy();
        throw new BrokenWalError(
          `WAL segment ${segment.name} has more than ${WAL_SEGMENT_BYTES} bytes`,
        );
      }
      chunks.push(chunk);
    }
    const piece = Buffer.concat(chunks);
    const md5 = recordedMd5(segment.etags?.[i]);
    if (md5 !== undefined && createHash('md5').update(piece).digest('hex') !== md5)
      throw new BrokenWalError(`${object} is not the bytes archived (its MD5 differs)`);
    pieces.push(piece);
  }
  return pieces.length === 1 && pieces[0] ? pieces[0] : Buffer.concat(pieces);
}

/**
 * A completed segment stored compressed, decompressed by zstd straight into `path`: the
 * 16 MiB never pass through this process (through it, they cost more CPU than the rest
 * of the fetch). It must be exactly a segment.
 */
async function decompressInto(name: string, stored: Buffer, path: string): Promise<void> {
  const size = await zstdDecompressToFile(stored, path, {
    maxBytes: WAL_SEGMENT_BYTES,
    niceness: DECOMPRESS_NICENESS,
  }).catch((err: unknown) => {
    throw new BrokenWalError(`WAL segment ${name} does not decompress: ${(err as Error).message}`);
  });
  if (size !== WAL_SEGMENT_BYTES) {
    await rm(path, { force: true });
    throw new BrokenWalError(`WAL segment ${name} has ${size} bytes, not ${WAL_SEGMENT_BYTES}`);
  }
  await chmod(path, 0o600);
}

/** The MD5 an ETag stands for (a single upload's, quoted or not); undefined for others. */
export function recordedMd5(etag: string | null | undefined): string | undefined {
  const bare = etag?.replace(/^"|"$/g, '').toLowerCase();
  return bare && /^[0-9a-f]{32}$/.test(bare) ? bare : undefined;
}
