import { parseSegmentName, segmentName, segmentStart } from '@pgcloud/postgres';
import type { StoredObject } from '@pgcloud/storage';
import type { SegmentEntity } from './segment.entity.js';
import type { Piece } from './wal-keys.js';
import { chainOf, pieceKeys, pieceOf } from './wal-keys.js';

/** What one listing of an archive's objects shows, beside the segments recorded. */
export interface ArchiveFindings {
  /** The first thing wrong with a recorded segment; undefined when all are whole. */
  problem?: string;
  /** The segment the problem is in: the archive is whole only before it. */
  firstBadSegno?: bigint;
  /** When the newest object of the timeline was written; null when there is none. */
  newestObjectAt: Date | null;
  /** How far the WAL in the object store reaches: the end of what is there without a gap. */
  storedLsn: bigint | null;
}

/** One object a recorded segment needs: its key, its size and the ETag recorded for it. */
interface ExpectedObject {
  key: string;
  size: number;
  etag: string | null;
}

function expectedObjects(segment: SegmentEntity): ExpectedObject[] {
  const etagAt = (i: number): string | null => segment.etags?.[i] ?? null;
  if (!segment.pieceEnds)
    return [
      { key: segment.objectKey, size: segment.zstdBytes ?? segment.sizeBytes, etag: etagAt(0) },
    ];
  const ends = segment.pieceEnds;
  return pieceKeys(segment.objectKey, ends).map((key, i) => ({
    key,
    size: ends[i] - (i === 0 ? 0 : ends[i - 1]),
    etag: etagAt(i),
  }));
}

/**
 * Looks at an archive as the object store holds it (docs/api/pitr.md#archive-health): every
 * recorded segment of its timeline, oldest first, must follow the one before without a gap,
 * and each of its objects must be listed with its size and, where one was recorded, the
 * ETag the store answered when it was written. `segments` must be read before the listing
 * was made: a segment is recorded only once its objects are in the store.
 */
export function inspectArchive(
  segments: readonly SegmentEntity[],
  listed: readonly StoredObject[],
  timeline: number,
): ArchiveFindings {
  const onTimeline = listed.filter((o) => o.key.includes(`/${timeline}/`));
  const newest = onTimeline.reduce<Date | null>(
    (at, o) => (o.lastModified && (!at || o.lastModified > at) ? o.lastModified : at),
    null,
  );
  const byKey = new Map(onTimeline.map((o) => [o.key, o]));
  const ordered = [...segments].sort((a, b) => (a.segno < b.segno ? -1 : 1));
  const found: ArchiveFindings = {
    newestObjectAt: newest,
    storedLsn: storedLsnOf(ordered, onTimeline),
  };
  for (const [i, segment] of ordered.entries()) {
    const before = ordered[i - 1];
    if (before && segment.segno !== before.segno + 1n) {
      const missing = before.segno + 1n;
      const problem = `segment ${segmentName(timeline, missing)} is missing from the archive`;
      return { ...found, problem, firstBadSegno: missing };
    }
    const problem = objectProblem(segment, byKey);
    if (problem) return { ...found, problem, firstBadSegno: segment.segno };
  }
  return found;
}

function objectProblem(
  segment: SegmentEntity,
  byKey: ReadonlyMap<string, StoredObject>,
): string | undefined {
  for (const expected of expectedObjects(segment)) {
    const object = byKey.get(expected.key);
    if (!object) return `segment ${segment.name} is missing from the object store`;
    if (object.size !== expected.size)
      return `segment ${segment.name} holds ${object.size} bytes in the object store, not ${expected.size}`;
    if (expected.etag && object.etag && expected.etag !== object.etag)
      return `segment ${segment.name} changed in the object store since it was archived`;
  }
  return undefined;
}

/**
 * The end of the WAL the store holds: past the newest recorded segment, the pieces of the
 * next one (the segment being written), as far as they chain from its start.
 */
function storedLsnOf(
  ordered: readonly SegmentEntity[],
  listed: readonly StoredObject[],
): bigint | null {
  const last = ordered.at(-1);
  const pieces = listed.map(pieceOf).filter((p): p is Piece => p !== undefined);
  const writing = last
    ? last.segno + 1n
    : pieces.reduce<bigint | null>((min, p) => {
        const segno = parseSegmentName(p.name)?.segno;
        return segno !== undefined && (min === null || segno < min) ? segno : min;
      }, null);
  const base = last ? segmentStart(last.segno + 1n) : null;
  if (writing === null) return base;
  const ofWriting = pieces.filter((p) => parseSegmentName(p.name)?.segno === writing);
  const end = chainOf(ofWriting, 0)?.at(-1)?.end ?? 0;
  return end > 0 ? segmentStart(writing) + BigInt(end) : base;
}
