import type { SocketAddress } from '@pgcloud/postgres';
import { withSuperuser } from '@pgcloud/postgres';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';

const RELOAD_TIMEOUT_MS = 10_000;
const SQL_TIMEOUT_MS = 5000;
// pg_file_settings marks a bad value and a change that waits for a restart alike
// ("setting could not be applied"): only the first is a mistake.
const REFUSED_SETTINGS = `
  SELECT format('%s line %s: %s', f.sourcefile, f.sourceline, f.error) AS problem
    FROM pg_file_settings f
   WHERE f.error IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM pg_settings s WHERE s.name = lower(f.name) AND s.pending_restart)
  UNION ALL
  SELECT format('pg_hba.conf line %s: %s', line_number, error)
    FROM pg_hba_file_rules WHERE error IS NOT NULL`;

/**
 * Reloads the server's configuration files and resolves the parameters that wait for a
 * restart (`pg_settings.pending_restart`). pg_reload_conf() only signals the postmaster,
 * so the answer is read in a session opened after the postmaster re-read its files (its
 * pg_conf_load_time() moved on). A file the server could not take (a bad value, a bad
 * pg_hba line) is an error naming what is wrong: the server keeps its old settings and
 * the files stay as written, so, as on CNPG, the next restart fails on them.
 */
export async function reloadSettings(address: SocketAddress): Promise<string[]> {
  const loadTime = async (client: pg.Client): Promise<string> => {
    const { rows } = await client.query<{ t: string }>('SELECT pg_conf_load_time()::text AS t');
    return rows[0]?.t ?? '';
  };
  const before = await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
    const time = await loadTime(client);
    await client.query('SELECT pg_reload_conf()');
    return time;
  });
  const deadline = Date.now() + RELOAD_TIMEOUT_MS;
  for (;;) {
    const outcome = await withSuperuser(address, SQL_TIMEOUT_MS, async (client) => {
      if ((await loadTime(client)) === before) return undefined;
      const problems = await client.query<{ problem: string }>(REFUSED_SETTINGS);
      if (problems.rows.length > 0)
        throw new Error(
          `the server refused its new configuration: ${problems.rows.map((r) => r.problem).join('; ')}`,
        );
      const pending = await client.query<{ name: string }>(
        'SELECT name FROM pg_settings WHERE pending_restart ORDER BY name',
      );
      return pending.rows.map((row) => row.name);
    });
    if (outcome) return outcome;
    if (Date.now() > deadline) throw new Error('the server did not reload its configuration');
    await delay(20);
  }
}
