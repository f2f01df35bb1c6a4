const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
/** Writable again once below this share of the limit, so a server does not flap at the edge. */
const RELEASE_BELOW = 0.9;

/** What the watch does about a server's size: stop its writes, allow them again, or nothing. */
export type StorageAction = 'make-read-only' | 'make-writable' | 'none';

/**
 * The storage limit: a database whose data reaches `storage` GiB turns read-only; it turns
 * writable again once below 90% of the limit.
 */
export function storageAction(
  usedBytes: number,
  storageGib: number,
  readOnlyNow: boolean,
): StorageAction {
  const limit = storageGib * GIB;
  if (!readOnlyNow && usedBytes >= limit) return 'make-read-only';
  if (readOnlyNow && usedBytes < limit * RELEASE_BELOW) return 'make-writable';
  return 'none';
}

/**
 * True when the data fits a limit of `storageGib` with room to spare: under 90% of it, so
 * the server is writable there (a resize to less storage needs this).
 */
export function fitsUnderLimit(usedBytes: number, storageGib: number): boolean {
  return usedBytes < storageGib * GIB * RELEASE_BELOW;
}

/** The fence's grace: how far past its limit a server may get before it is fenced. */
export interface FenceGrace {
  percent: number;
  minMib: number;
}

/**
 * The storage limit in bytes, and the size past which the server is fenced: the limit and
 * the grace; while a cleanup window is open, twice the grace, or the grace past what the
 * server used when the window opened (`cleanupFromBytes`) when that is more, so a server
 * fenced far past its limit can still be cleaned up.
 */
export function storageEdges(
  storageGib: number,
  grace: FenceGrace,
  cleaning: { fromBytes: number | null } | false = false,
): { limitBytes: number; fenceAtBytes: number } {
  const limitBytes = storageGib * GIB;
  const graceBytes = Math.max((limitBytes * grace.percent) / 100, grace.minMib * MIB);
  if (!cleaning) return { limitBytes, fenceAtBytes: limitBytes + graceBytes };
  const fenceAtBytes = Math.max(
    limitBytes + 2 * graceBytes,
    (cleaning.fromBytes ?? 0) + graceBytes,
  );
  return { limitBytes, fenceAtBytes };
}
