import { parseSegmentName, segmentOf, segmentStart, zstdCompressFile } from '@pgcloud/postgres';
import { open, readFile, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { coveredUntil } from '../archive/recovery-window.js';
import type { Piece } from '../archive/wal-keys.js';
import { chainOf, compressedKey, pieceKey, pieceOf, segmentKey } from '../archive/wal-keys.js';
import type { ArchivedSegment } from '../archive/segment.repository.js';
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
  /**
   * The primary's recent samples (its clock and WAL position): a completed segment records
   * the newest moment whose commits all lie in it or before it.
   */
  samples?: readonly { at: Date; lsn: bigint }[];
}

/** Which archive a spool directory's WAL goes to. */
export interface UploadTarget {
  projectId: string;
  databaseId: string;
  /** The spool directory pg_receivewal writes into. */
  directory: string;
}

/**
 * The most pieces a segment is stored in: a restore fetches each on its own. The segment
 * being written starts its pieces over at the limit; one that is past it when it completes
 * (its pieces found in S3 after a restart) goes up whole instead.
 */
export const MAX_PIECES = 32;

/**
 * Puts what pg_receivewal wrote into the spool in S3: the segment being written goes up in
 * pieces, each what pg_receivewal has synced (`flushed`) since the piece before, so the
 * archive is never more than a moment behind; once complete, the segment goes up again
 * zstd-compressed as one object, which is what restores fetch (about half the bytes). The
 * fence is looked at before each piece.
 */
export class SegmentUploader {
  /** The pieces in S3 of the segment being written, from its start: where each ends. */
  private chain: { segno: bigint; ends: number[]; etags: (string | null)[] } | undefined;

  constructor(
    private readonly target: UploadTarget,
    private readonly fence: LeaseFence,
    private readonly deps: Pick<ReceiverDeps, 'store' | 'segments'>,
  ) {}

  async upload(position: ArchivedPosition, flushed: bigint | null): Promise<void> {
    const files = (await readdir(this.target.directory)).sort();
    await this.uploadCompleted(files, position);
    const partial = files.find((f) => f.endsWith(PARTIAL));
    if (partial && flushed !== null) await this.uploadPiece(partial, position, flushed);
  }

  /** Each completed segment of the timeline past what is archived goes up; all leave the spool. */
  private async uploadCompleted(files: string[], position: ArchivedPosition): Promise<void> {
    const { databaseId, directory } = this.target;
    for (const name of files) {
      const segment = parseSegmentName(name);
      if (!segment || segment.timeline !== position.timeline) continue;
      const end = segmentStart(segment.segno + 1n);
      if (end > position.archived) {
        const path = join(directory, name);
        const key = this.keyOf(segment.timeline, name);
        const { size } = await stat(path);
        const stored = await this.storeCompleted(segment.segno, key, path, size, position);
        await this.deps.segments.record({
          databaseId,
          name,
          timeline: segment.timeline,
          segno: segment.segno,
          sizeBytes: size,
          coveredUntil: position.samples ? (coveredUntil(position.samples, end) ?? null) : null,
          ...stored,
        });
        this.chain = undefined;
        position.archived = end;
        position.lastWalFile = name;
      }
      await unlink(join(directory, name));
    }
  }

  /**
   * Stores a completed segment: zstd-compressed in one object, whatever pieces it went up in
   * as it was written (they stay until the sweep removes them); as is only when compressing
   * does not make it smaller: as its pieces where they began, the last one put now.
   */
  private async storeCompleted(
    segno: bigint,
    key: string,
    path: string,
    size: number,
    position: ArchivedPosition,
  ): Promise<Pick<ArchivedSegment, 'objectKey' | 'etags' | 'pieceEnds' | 'zstdBytes'>> {
    // zstd reads the file itself: the 16 MiB do not pass through this process.
    const compressed = await zstdCompressFile(path);
    if (compressed.length < size) {
      const objectKey = compressedKey(key);
      const etag = await this.put(objectKey, compressed);
      return { objectKey, etags: [etag], zstdBytes: compressed.length };
    }
    const body = await readFile(path);
    const begun = await this.piecesOf(segno, key, position);
    const last = begun.ends.at(-1) ?? 0;
    if (last === 0 || begun.ends.length >= MAX_PIECES)
      return { objectKey: key, etags: [await this.put(key, body)] };
    // A chain that reaches the end already: its last piece went up, its record did not.
    if (last >= body.length) return { objectKey: key, etags: begun.etags, pieceEnds: begun.ends };
    const etag = await this.put(pieceKey(key, last, body.length), body.subarray(last));
    return {
      objectKey: key,
      etags: [...begun.etags, etag],
      pieceEnds: [...begun.ends, body.length],
    };
  }

  /** What pg_receivewal synced of the segment being written since its last piece. */
  private async uploadPiece(
    partial: string,
    position: ArchivedPosition,
    flushed: bigint,
  ): Promise<void> {
    const name = partial.slice(0, -PARTIAL.length);
    const segment = parseSegmentName(name);
    if (!segment || segment.timeline !== position.timeline) return;
    const start = segmentStart(segment.segno);
    // Only on from where the archive is: the segments before this one are all in S3.
    if (position.archived < start || segmentOf(flushed) !== segment.segno) return;
    if (flushed <= position.archived || flushed <= start) return;
    const key = this.keyOf(segment.timeline, name);
    const { ends, etags } = await this.piecesOf(segment.segno, key, position);
    // Slow WAL would leave a segment in many small pieces, each a fetch for a restore: at
    // the limit, what is synced goes up again as one piece from the start.
    const again = ends.length >= MAX_PIECES - 1;
    const from = again ? 0 : (ends.at(-1) ?? 0);
    const to = Number(flushed - start);
    if (to > from) {
      const body = await readRange(join(this.target.directory, partial), from, to - from);
      if (!body || body.length < to - from) return; // completed meanwhile: the next round has it
      if (await this.fence.check()) return;
      const etag = await this.put(pieceKey(key, from, to), body);
      if (again) {
        ends.length = 0;
        etags.length = 0;
      }
      ends.push(to);
      etags.push(etag);
    }
    position.archived = flushed;
    position.lastWalFile = partial;
  }

  /**
   * The chain of pieces of this segment in S3 (a restart, or the archive's first segment,
   * asks S3 which reach the archived position from the start). With none, pieces begin
   * at the segment's start again: the same bytes.
   */
  private async piecesOf(
    segno: bigint,
    key: string,
    position: ArchivedPosition,
  ): Promise<{ ends: number[]; etags: (string | null)[] }> {
    if (this.chain?.segno === segno) return this.chain;
    const archived = position.archived - segmentStart(segno);
    this.chain = { segno, ends: [], etags: [] };
    if (archived > 0n && segmentOf(position.archived) === segno) {
      const listed = await this.deps.store.list(`${key}.`);
      const etagOf = new Map(listed.map((o) => [o.key, o.etag ?? null]));
      const pieces = listed
        .map(pieceOf)
        .filter((p): p is Piece => p !== undefined && p.key === pieceKey(key, p.start, p.end));
      const chain = chainOf(pieces, Number(archived)) ?? [];
      this.chain.ends = chain.map((p) => p.end);
      this.chain.etags = chain.map((p) => etagOf.get(p.key) ?? null);
    }
    return this.chain;
  }

  private keyOf(timeline: number, name: string): string {
    return segmentKey(this.target.projectId, this.target.databaseId, timeline, name);
  }

  /** Puts one object; answers its ETag. */
  private async put(key: string, body: Buffer): Promise<string | null> {
    const { etag } = await this.deps.store.put(key, body);
    walUploadedBytes.inc(body.length);
    return etag ?? null;
  }
}

/** `length` bytes of a file from `offset` (what pg_receivewal has synced of a `.partial`). */
async function readRange(
  path: string,
  offset: number,
  length: number,
): Promise<Buffer | undefined> {
  const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!handle) return undefined;
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
