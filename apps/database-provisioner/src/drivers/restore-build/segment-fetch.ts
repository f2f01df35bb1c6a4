import { createHash } from 'node:crypto';
import { chmod, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser } from '@pgcloud/postgres/files';
import { WAL_SEGMENT_BYTES, chownFile, zstdDecompressToFile } from '@pgcloud/postgres/files';
import type { RestoreSegment } from '../database-driver.js';
import { BrokenWalError } from '../database-driver.js';
import { fetchBody } from './fetched-body.js';

// The nice value of the spool's decompressions: replay is one process, and 8 of them beside
// it on two cores halved its pace (7 segments a second against 13.5 once the spool was
// done, which was always ahead of it). Niced, they take what replay leaves.
const DECOMPRESS_NICENESS = 10;

/**
 * Fetches one segment into `dir` under a temporary name, checks it (its MD5s, its size, its
 * decompression) and renames it to its own name, so restore_command copies only whole
 * segments. A fetch that takes longer than `timeoutMs` has stalled and fails.
 */
export async function fetchSegment(
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
