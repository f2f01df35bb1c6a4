import { createHash } from 'node:crypto';
import type { ProvenRestorable, Tier } from '@pgcloud/contracts';

/**
 * Where in each period a database's automated drill falls: a fixed offset from its id, so
 * a deployment's drills spread over the period instead of all starting at once.
 */
export function drillOffsetMs(databaseId: string, intervalMs: number): number {
  const digest = createHash('sha256').update(`drill:${databaseId}`).digest();
  return digest.readUIntBE(0, 6) % intervalMs;
}

/**
 * The start of the database's current drill slot: the latest offset + n * interval at or
 * before `nowMs`. One automated drill is made per database and slot.
 */
export function drillSlotStart(databaseId: string, nowMs: number, intervalMs: number): number {
  const offset = drillOffsetMs(databaseId, intervalMs);
  return offset + Math.floor((nowMs - offset) / intervalMs) * intervalMs;
}

/** What the schedule needs of a running database. */
export interface ScheduledDatabase {
  id: string;
  ownerId: string;
  createdAt: Date;
  lastProvenRestorable: ProvenRestorable | null;
}

/** A database's drill period, by its owner's tier (an unknown tier is Free's). */
export function drillIntervalMs(tier: Tier | undefined, intervals: Record<Tier, number>): number {
  return intervals[tier ?? 'free'];
}

/**
 * Overdue: no drill passed in two periods, for a database older than that (a younger one
 * has had no chance to be drilled twice).
 */
export function drillOverdue(database: ScheduledDatabase, nowMs: number, intervalMs: number) {
  const since = nowMs - 2 * intervalMs;
  if (database.createdAt.getTime() > since) return false;
  const proven = database.lastProvenRestorable?.at;
  return proven === undefined || Date.parse(proven) < since;
}
