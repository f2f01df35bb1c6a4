import { createHash } from 'node:crypto';
import type { Tier } from '@pgcloud/contracts';

/**
 * Where in each period a database's automated backup falls: a fixed offset from its id,
 * so a deployment's backups spread over the day instead of all starting at midnight.
 */
export function scheduleOffsetMs(databaseId: string, intervalMs: number): number {
  const digest = createHash('sha256').update(databaseId).digest();
  return digest.readUIntBE(0, 6) % intervalMs;
}

/**
 * The schedule period a moment falls in, for one database: period n runs from
 * offset + n * interval. One automated backup per (database, period) is stored.
 */
export function scheduleSlot(databaseId: string, nowMs: number, intervalMs: number): number {
  return Math.floor((nowMs - scheduleOffsetMs(databaseId, intervalMs)) / intervalMs);
}

/** When an automated backup taken now expires, by its owner's tier. */
export function expiryOf(
  tier: Tier | undefined,
  nowMs: number,
  retentionSeconds: Record<Tier, number>,
): Date {
  return new Date(nowMs + retentionSeconds[tier ?? 'free'] * 1000);
}
