import { access, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser, PgTools, SocketAddress } from '@pgcloud/postgres';
import { chownFile, fsyncPath, runPgCtl, withSuperuser } from '@pgcloud/postgres';

/**
 * A server held for a restore runs as a hot standby of itself: `standby.signal` in its
 * data directory, no primary to follow and no restore_command. PostgreSQL then refuses
 * every write whatever the client sends (`BEGIN READ WRITE`, `SET SESSION CHARACTERISTICS`,
 * `ALTER DATABASE ... SET default_transaction_read_only`), while reads go on. Putting a
 * server on hold or taking it off costs a restart (its sessions are dropped once, about a
 * second here); a restored server is opened by promotion instead, which drops nobody.
 */
const STANDBY_SIGNAL = 'standby.signal';
const SQL_TIMEOUT_MS = 10_000;
const PROMOTE_TIMEOUT_SECONDS = '300';

/** Whether the data directory is marked to start held. */
export function isMarkedHeld(pgdata: string): Promise<boolean> {
  return access(join(pgdata, STANDBY_SIGNAL)).then(
    () => true,
    () => false,
  );
}

/** Marks the data directory to start held; takes effect at the server's next start. */
export async function markHeld(pgdata: string, osUser: OsUser): Promise<void> {
  const signal = join(pgdata, STANDBY_SIGNAL);
  await writeFile(signal, '');
  await chownFile(signal, osUser);
  await fsyncPath(pgdata);
}

/** Removes the mark; a stopped server then starts writable on its own timeline. */
export async function unmarkHeld(pgdata: string): Promise<void> {
  await rm(join(pgdata, STANDBY_SIGNAL), { force: true });
  await fsyncPath(pgdata);
}

/** Whether the running server is in recovery, that is held (or still starting). */
export async function inRecovery(address: SocketAddress): Promise<boolean> {
  return withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
    const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    return rows[0]?.r ?? false;
  });
}

/**
 * Opens a held server for writes without a restart: promotion ends its recovery on a new
 * timeline and removes the mark. Only for restored data, whose WAL archive starts anew.
 */
export async function promoteHeld(pgdata: string, tools: PgTools): Promise<void> {
  await runPgCtl(tools.binDir, pgdata, 'promote', ['-t', PROMOTE_TIMEOUT_SECONDS], {
    osUser: tools.osUser,
  });
}
