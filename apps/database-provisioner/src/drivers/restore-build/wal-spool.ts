import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { OsUser } from '@pgcloud/postgres';
import { WAL_SEGMENT_BYTES, chownFile } from '@pgcloud/postgres';
import type { RestoreSegment } from '../database-driver.js';

// Segments fetched at once: S3 answers each in about 0.3 s, replay eats one in 0.1 s.
const PARALLEL_FETCHES = 8;

/**
 * Fetches a point-in-time restore's WAL segments into `dir` in parallel, before recovery
 * starts, so restore_command is a plain copy (platform-facts: fetching each segment from
 * S3 inside restore_command is several times slower than replay). The segment that was
 * still being written is padded with zeros to a whole segment, as pg_receivewal keeps it:
 * replay ends where its data ends.
 */
export async function fetchSegments(
  segments: readonly RestoreSegment[],
  dir: string,
  osUser: OsUser,
  signal?: AbortSignal,
): Promise<void> {
  const queue = [...segments];
  const worker = async () => {
    for (let segment = queue.shift(); segment; segment = queue.shift())
      await fetchSegment(segment, dir, osUser, signal);
  };
  await Promise.all(Array.from({ length: PARALLEL_FETCHES }, worker));
}

async function fetchSegment(
  segment: RestoreSegment,
  dir: string,
  osUser: OsUser,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (!/^[0-9A-F]{24}$/.test(segment.name)) throw new Error(`not a WAL segment: ${segment.name}`);
  const response = await fetch(segment.url, signal ? { signal } : {});
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`WAL segment ${segment.name}: HTTP ${response.status}`);
  }
  const path = join(dir, segment.name);
  await pipeline(Readable.fromWeb(response.body), createWriteStream(path, { mode: 0o600 }));
  const file = await open(path, 'r+');
  try {
    const { size } = await file.stat();
    // Short WAL would end replay early and pass for "no commit after the target".
    const expected = segment.partial ? segment.sizeBytes : WAL_SEGMENT_BYTES;
    if (size < expected || size > WAL_SEGMENT_BYTES)
      throw new Error(`WAL segment ${segment.name} has ${size} bytes, not ${expected}`);
    if (size < WAL_SEGMENT_BYTES) await file.truncate(WAL_SEGMENT_BYTES);
  } finally {
    await file.close();
  }
  await chownFile(path, osUser);
}
