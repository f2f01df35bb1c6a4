// The WAL segments a restore by hand fetches from pgcloud's archive in the stack's bucket:
// under `projects/{project}/databases/{database}/wal/`, each completed segment one object
// compressed with zstd (`.zst`), or as is: one object, or the pieces it was uploaded in as it grew.
import { WAL_SEGMENT_BYTES, parseSegmentName } from '@pgcloud/postgres';

/** One WAL segment to fetch, under the name restore_command asks for: its objects in order. */
export interface WalObject {
  keys: string[];
  name: string;
  partial: boolean;
  /** One object, zstd-compressed. */
  compressed: boolean;
}

/** A listed object of the archive: a whole segment, or a piece of one from `start` to `end`. */
interface Listed {
  key: string;
  name: string;
  timeline: number;
  start: number;
  end: number;
  compressed: boolean;
}

/**
 * The segments of the newest timeline from the base backup's start on: each its compressed
 * object where there is one, or one whole object, or the pieces it was uploaded in as it grew
 * (the last one may still be growing).
 */
export function walObjects(
  objects: readonly { key: string; size: number }[],
  source: { walPrefix: string; firstSegment: bigint },
): WalObject[] {
  const found = objects.flatMap(({ key, size }): Listed[] => {
    const match = /\/([0-9A-F]{24})(?:\.([0-9a-f]{8})-([0-9a-f]{8})|(\.partial)|(\.zst))?$/.exec(
      key,
    );
    const segment = match?.[1] ? parseSegmentName(match[1]) : undefined;
    if (!match?.[1] || !segment || segment.segno < source.firstSegment) return [];
    const [start, end] = match[2]
      ? [parseInt(match[2], 16), parseInt(match[3] ?? '', 16)]
      : [0, match[4] ? size : WAL_SEGMENT_BYTES];
    const compressed = match[5] !== undefined;
    return [{ key, name: match[1], timeline: segment.timeline, start, end, compressed }];
  });
  if (found.length === 0) throw new Error(`no WAL segment under ${source.walPrefix}`);
  const timeline = Math.max(...found.map((o) => o.timeline));
  const names = [...new Set(found.filter((o) => o.timeline === timeline).map((o) => o.name))];
  return names.sort().map((name) => {
    const objects = found.filter((o) => o.name === name);
    const zst = objects.find((o) => o.compressed);
    if (zst) return { name, keys: [zst.key], partial: false, compressed: true };
    // From the start, the longest object that begins where the one before ends.
    const chain: Listed[] = [];
    let reach = 0;
    while (reach < WAL_SEGMENT_BYTES) {
      const next = objects
        .filter((o) => o.start === reach)
        .sort((a, b) => b.end - a.end)
        .at(0);
      if (!next) break;
      chain.push(next);
      reach = next.end;
    }
    const partial = reach < WAL_SEGMENT_BYTES;
    return { name, keys: chain.map((o) => o.key), partial, compressed: false };
  });
}
