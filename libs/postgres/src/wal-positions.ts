/**
 * WAL positions and segment names (PostgreSQL's default 16 MiB segments). An LSN is
 * written `X/Y` (two hex halves of a 64-bit byte position); as a bigint here, so it can be
 * compared and stored. A segment file is named by 8 hex digits of timeline, then 16 of
 * segment number (`000000010000000000000003`).
 */
export const WAL_SEGMENT_BYTES = 16 * 1024 * 1024;
const SEGMENT = BigInt(WAL_SEGMENT_BYTES);
const SEGMENTS_PER_XLOGID = 0x1_0000_0000n / SEGMENT;
const SEGMENT_NAME = /^([0-9A-F]{8})([0-9A-F]{8})([0-9A-F]{8})$/;

/** `0/3002018` -> 50339864n. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!match) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** 50339864n -> `0/3002018`. */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffff_ffffn).toString(16).toUpperCase()}`;
}

/** The number of the segment holding `lsn`. */
export function segmentOf(lsn: bigint): bigint {
  return lsn / SEGMENT;
}

/** Where a segment begins; it ends where the next begins. */
export function segmentStart(segno: bigint): bigint {
  return segno * SEGMENT;
}

/** The file name of a segment on a timeline. */
export function segmentName(timeline: number, segno: bigint): string {
  const hex = (value: bigint) => value.toString(16).toUpperCase().padStart(8, '0');
  return (
    hex(BigInt(timeline)) + hex(segno / SEGMENTS_PER_XLOGID) + hex(segno % SEGMENTS_PER_XLOGID)
  );
}

/** A segment's timeline and number from its file name; undefined for any other name. */
export function parseSegmentName(name: string): { timeline: number; segno: bigint } | undefined {
  const match = SEGMENT_NAME.exec(name);
  if (!match) return undefined;
  const [, timeline, high, low] = match;
  return {
    timeline: Number.parseInt(timeline ?? '', 16),
    segno: BigInt(`0x${high}`) * SEGMENTS_PER_XLOGID + BigInt(`0x${low}`),
  };
}
