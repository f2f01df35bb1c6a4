import { parseSegmentName, segmentOf, segmentStart } from '@pgcloud/postgres';
import { open, readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { partialKey, segmentKey } from '../archive/wal-keys.js';
import type { LeaseFence } from './lease-fence.js';
import type { ReceiverDeps } from './receiver-deps.js';
import { walUploadedBytes } from './receiver.metrics.js';

const PARTIAL = '.partial';

/** How far a receiver's archive reaches; the uploader moves it on as it puts WAL in S3. */
export interface ArchivedPosition {
  timeline: number;
  /** Everything below is in S3. */
  archived: bigint;
  lastWalFile: string | null;
}

/** Which archive a spool directory's WAL goes to. */
export interface UploadTarget {
  projectId: string;
  databaseId: string;
  /** The spool directory pg_receivewal writes into. */
  directory: string;
}

/**
 * Puts what pg_receivewal wrote into the spool in S3: completed segments go up whole and
 * are recorded, then the segment being written goes up under its `.partial` key as far as
 * pg_receivewal has synced it (`flushed`). The fence is looked at again before that: a
 * `.partial` is the one key a late writer could shorten (completed segments are the same
 * bytes whoever uploads them).
 */
export class SegmentUploader {
  constructor(
    private readonly target: UploadTarget,
    private readonly fence: LeaseFence,
    private readonly deps: Pick<ReceiverDeps, 'store' | 'segments'>,
  ) {}

  async upload(position: ArchivedPosition, flushed: bigint | null): Promise<void> {
    const files = (await readdir(this.target.directory)).sort();
    await this.uploadCompleted(files, position);
    const partial = files.find((f) => f.endsWith(PARTIAL));
    if (partial && flushed !== null) await this.uploadPartial(partial, position, flushed);
  }

  /** Each completed segment of the timeline past what is archived goes up; all leave the spool. */
  private async uploadCompleted(files: string[], position: ArchivedPosition): Promise<void> {
    const { projectId, databaseId, directory } = this.target;
    for (const name of files) {
      const segment = parseSegmentName(name);
      if (!segment || segment.timeline !== position.timeline) continue;
      const end = segmentStart(segment.segno + 1n);
      if (end > position.archived) {
        const key = segmentKey(projectId, databaseId, segment.timeline, name);
        const body = await readFile(join(directory, name));
        await this.deps.store.put(key, body);
        walUploadedBytes.inc(body.length);
        await this.deps.segments.record({
          databaseId,
          name,
          timeline: segment.timeline,
          segno: segment.segno,
          objectKey: key,
          sizeBytes: body.length,
        });
        position.archived = end;
        position.lastWalFile = name;
      }
      await unlink(join(directory, name));
    }
  }

  private async uploadPartial(
    partial: string,
    position: ArchivedPosition,
    flushed: bigint,
  ): Promise<void> {
    const name = partial.slice(0, -PARTIAL.length);
    const segment = parseSegmentName(name);
    if (!segment || segment.timeline !== position.timeline) return;
    const start = segmentStart(segment.segno);
    if (segmentOf(flushed) !== segment.segno || flushed <= position.archived || flushed <= start)
      return;
    const body = await readPrefix(join(this.target.directory, partial), Number(flushed - start));
    if (!body) return; // completed meanwhile: the next round uploads it whole
    if (await this.fence.check()) return;
    const { projectId, databaseId } = this.target;
    await this.deps.store.put(partialKey(projectId, databaseId, segment.timeline, name), body);
    walUploadedBytes.inc(body.length);
    position.archived = flushed;
    position.lastWalFile = partial;
  }
}

/** The first `length` bytes of a file (what pg_receivewal has synced of a `.partial`). */
async function readPrefix(path: string, length: number): Promise<Buffer | undefined> {
  const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!handle) return undefined;
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
