import type { SocketAddress } from '@pgcloud/postgres';
import { withSuperuser } from '@pgcloud/postgres';
import type { CopiedPoint } from '../database-driver.js';

/** The newest timeline history file: its last line names where the new timeline began. */
const HISTORY = `
  SELECT pg_read_file('pg_wal/' || name) AS history FROM pg_ls_waldir()
   WHERE name LIKE '%.history' ORDER BY name DESC LIMIT 1`;

/**
 * Before any new commit, pg_last_committed_xact() is still the last transaction replayed
 * (where commit timestamps are tracked: every server pgcloud makes, not every checking
 * server of a build).
 */
const LAST_REPLAYED_COMMIT = `
  SELECT CASE WHEN current_setting('track_commit_timestamp')::boolean
              THEN (SELECT timestamp FROM pg_last_committed_xact()) END AS at`;

/**
 * Where restored (or branched) data, just promoted, copied its source: asked on the
 * checking server before anything commits there. Undefined when it cannot tell (no
 * history file, or the question failed): the restore goes on without it.
 */
export async function copiedPointOf(address: SocketAddress): Promise<CopiedPoint | undefined> {
  return withSuperuser(address, 10_000, async (client) => {
    const history = await client.query<{ history: string }>(HISTORY);
    const lsn = switchPointOf(history.rows[0]?.history ?? '');
    if (!lsn) return undefined;
    const last = await client
      .query<{ at: Date | null }>(LAST_REPLAYED_COMMIT)
      .then((result) => result.rows[0]?.at ?? null)
      .catch(() => null);
    return { lsn, at: last?.toISOString() ?? null };
  }).catch(() => undefined);
}

/** The switch point of a timeline history file's last entry (`TLI<tab>LSN<tab>reason`). */
export function switchPointOf(history: string): string | undefined {
  const last = history
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .at(-1);
  return last?.split(/\s+/)[1];
}
