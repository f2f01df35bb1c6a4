// A server's WAL segment ended, and whether its archive_command has stored it, as
// pg_stat_archiver tells: the archiver counts a segment archived only once the command has
// answered success.
import { setTimeout as delay } from 'node:timers/promises';
import type { SocketAddress } from '@pgcloud/postgres';
import { withSuperuser } from '@pgcloud/postgres';

const SQL_TIMEOUT_MS = 30_000;

/**
 * Ends the server's current WAL segment, so it is archived now (pg_switch_wal, which only a
 * superuser may call); answers the segment's name.
 */
export async function switchWal(address: SocketAddress): Promise<string> {
  const file = await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
    const { rows } = await client.query<{ file: string }>(
      'SELECT pg_walfile_name(pg_switch_wal()) AS file',
    );
    return rows[0]?.file;
  });
  if (!file) throw new Error('the server answered no WAL file');
  return file;
}

/** Waits until the server at `address` has archived the segment `walFile` or a later one. */
export async function archivedThrough(
  address: SocketAddress,
  walFile: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stat = await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
      const { rows } = await client.query<{ last: string | null; failed: string | null }>(
        'SELECT last_archived_wal AS last, last_failed_wal AS failed FROM pg_stat_archiver',
      );
      return rows[0];
    });
    // Segment names of one timeline sort as their positions; a .partial or .backup file
    // begins with its segment's name.
    if (stat?.last && stat.last.slice(0, 24) >= walFile) return;
    if (Date.now() > deadline)
      throw new Error(
        `the archiver stored no ${walFile} in time (last ${stat?.last ?? 'none'}, failed ${stat?.failed ?? 'none'})`,
      );
    await delay(250);
  }
}
