import { setTimeout as delay } from 'node:timers/promises';
import type { SocketAddress } from '@pgcloud/postgres';
import { withSuperuser } from '@pgcloud/postgres';

const SQL_TIMEOUT_MS = 30_000;
// As pgcloud's restore looks for its server's promotion: in one session, every 20 ms. A
// login a look forks a backend each time, which on a 2-core virtual machine took a good
// part of the CPU recovery needed (bench/results/2026-11-29-pitr-5.md).
const LOOK_EVERY_MS = 20;
/** SQLSTATE read_only_sql_transaction: a write refused while the server recovers. */
const READ_ONLY = '25006';

/**
 * Tries a write every 20 ms, in one session, until one commits: the server refuses it
 * while it is still in recovery (read_only_sql_transaction); any other error is a failure.
 * The server must take sessions (a hot standby, or promoted).
 */
export async function untilWritable(address: SocketAddress): Promise<void> {
  await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
    for (;;) {
      try {
        await client.query('CREATE TABLE IF NOT EXISTS public.bench_restored_writable ()');
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== READ_ONLY) throw err;
      }
      await delay(LOOK_EVERY_MS);
    }
  });
}

/** Asks pg_is_in_recovery() every 20 ms, in one session, until the server is promoted. */
export async function untilPromoted(address: SocketAddress): Promise<void> {
  await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
    for (;;) {
      const { rows } = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
      if (rows[0]?.r === false) return;
      await delay(LOOK_EVERY_MS);
    }
  });
}
