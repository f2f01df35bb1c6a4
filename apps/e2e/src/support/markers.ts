import type { TargetTime } from '@pgcloud/contracts';
import { fromMicros } from '@pgcloud/contracts';
import { psql } from './databases.js';
import { sleep } from './device-flow.js';

/** A marker row and the commit time the server stamped on its transaction. */
export interface Marker {
  k: number;
  committed: TargetTime;
}

export const MARKERS_TABLE_SQL =
  'CREATE TABLE markers (k integer PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT clock_timestamp())';

/**
 * Inserts markers first..last about `gapMs` apart, each in its own transaction, and
 * answers them with their commit times as the server saw them (track_commit_timestamp).
 */
export async function insertMarkers(
  connectionString: string,
  first: number,
  last: number,
  gapMs = 100,
): Promise<Marker[]> {
  for (let k = first; k <= last; k++) {
    await psql(connectionString, `INSERT INTO markers (k) VALUES (${k})`);
    await sleep(gapMs);
  }
  const rows = await psql(
    connectionString,
    `SELECT k || '|' || (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000000)::bigint
       FROM markers WHERE k BETWEEN ${first} AND ${last} ORDER BY k`,
  );
  return rows.split('\n').map((line) => {
    const [k, micros] = line.split('|');
    return { k: Number(k), committed: fromMicros(BigInt(micros ?? '0')) };
  });
}

/** The marker numbers a database holds, in order. */
export async function markersIn(connectionString: string): Promise<number[]> {
  const out = await psql(
    connectionString,
    "SELECT coalesce(string_agg(k::text, ',' ORDER BY k), '') FROM markers",
  );
  return out === '' ? [] : out.split(',').map(Number);
}

/** 1..k */
export function upTo(k: number, from = 1): number[] {
  return Array.from({ length: Math.max(0, k - from + 1) }, (_, i) => from + i);
}
