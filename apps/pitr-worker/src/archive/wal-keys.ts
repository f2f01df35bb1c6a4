/**
 * Where a database's WAL lives in S3 (docs/architecture.md#the-wal-archive-inside): ids, never
 * names.
 */
export function walPrefix(projectId: string, databaseId: string): string {
  return `projects/${projectId}/databases/${databaseId}/wal/`;
}

/**
 * How long the links a restore plan gives to WAL objects last: a piece no segment needs
 * is left that long, for a restore that fetches it.
 */
export const WAL_LINK_SECONDS = 3600;

/** A completed segment's object. */
export function segmentKey(
  projectId: string,
  databaseId: string,
  timeline: number,
  name: string,
): string {
  return `${walPrefix(projectId, databaseId)}${timeline}/${name}`;
}

/**
 * A completed segment stored zstd-compressed, in one object. Whatever its pieces, a
 * completed segment goes up again this way: a restore then fetches about half the bytes.
 */
export function compressedKey(segmentObjectKey: string): string {
  return `${segmentObjectKey}.zst`;
}

/**
 * A piece of the segment being written: its bytes from `start` up to `end` (offsets in the
 * segment, as 8 hex digits), uploaded once as the segment grows. A key is never written
 * with other bytes: a late writer on the same timeline writes the same WAL.
 */
export function pieceKey(segmentObjectKey: string, start: number, end: number): string {
  return `${segmentObjectKey}.${hex8(start)}-${hex8(end)}`;
}

/** The objects of a segment recorded as pieces, in order, from where each ends. */
export function pieceKeys(segmentObjectKey: string, ends: readonly number[]): string[] {
  return ends.map((end, i) => pieceKey(segmentObjectKey, i === 0 ? 0 : ends[i - 1], end));
}

/** A listed object that holds part of a segment still (or once) being written. */
export interface Piece {
  key: string;
  /** The segment's file name. */
  name: string;
  start: number;
  end: number;
}

const PIECE = /\/([0-9A-F]{24})\.([0-9a-f]{8})-([0-9a-f]{8})$/;
// What an earlier version uploaded instead: the segment's first bytes, replaced as it grew.
const PARTIAL = /\/([0-9A-F]{24})\.partial$/;

/** The object as a piece, or undefined for a completed segment's object or anything else. */
export function pieceOf(object: { key: string; size: number }): Piece | undefined {
  const piece = PIECE.exec(object.key);
  if (piece) {
    const start = parseInt(piece[2], 16);
    const end = parseInt(piece[3], 16);
    return end > start ? { key: object.key, name: piece[1], start, end } : undefined;
  }
  const partial = PARTIAL.exec(object.key);
  return partial && object.size > 0
    ? { key: object.key, name: partial[1], start: 0, end: object.size }
    : undefined;
}

/**
 * Pieces one after the other from the segment's start, as far as any such chain goes (the
 * fewest pieces to get there); undefined when none reaches `reach` bytes. Pieces may
 * overlap (a late writer, a crash between a put and its record): any chain is the same WAL.
 */
export function chainOf(pieces: readonly Piece[], reach: number): Piece[] | undefined {
  // Breadth first from offset 0: each offset reached, and the piece that first got there.
  const via = new Map<number, Piece | undefined>([[0, undefined]]);
  let furthest = 0;
  for (let frontier = [0]; frontier.length > 0;) {
    const next: number[] = [];
    for (const at of frontier)
      for (const piece of pieces)
        if (piece.start === at && piece.end > at && !via.has(piece.end)) {
          via.set(piece.end, piece);
          next.push(piece.end);
          furthest = Math.max(furthest, piece.end);
        }
    frontier = next;
  }
  if (furthest < reach) return undefined;
  const chain: Piece[] = [];
  for (let piece = via.get(furthest); piece; piece = via.get(piece.start)) chain.unshift(piece);
  return chain;
}

function hex8(offset: number): string {
  return offset.toString(16).padStart(8, '0');
}
