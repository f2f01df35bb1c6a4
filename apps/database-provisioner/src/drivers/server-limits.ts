import { quoteIdent } from '@pgcloud/postgres';
import type pg from 'pg';

/**
 * Settings that, set for a database or a role, would start sessions writable while the
 * server is read-only at its storage limit (docs/api/databases.md#storage).
 */
const READ_ONLY_SETTINGS = ['default_transaction_read_only', 'transaction_read_only'] as const;

/** How PostgreSQL spells "on" for a boolean (any unique prefix of true/yes counts). */
const BOOLEAN_ON = /^(on|t|tr|tru|true|y|ye|yes|1)$/i;

/**
 * Of a pg_db_role_setting row's `name=value` entries, the read-only settings whose value
 * is not "on": those lift the limit and are reset. An "on" the owner chose is kept.
 */
export function liftingSettings(setconfig: readonly string[]): string[] {
  const names = new Set<string>();
  for (const entry of setconfig) {
    const at = entry.indexOf('=');
    const name = entry.slice(0, at).toLowerCase();
    const value = entry.slice(at + 1).trim();
    const known = READ_ONLY_SETTINGS.find((setting) => setting === name);
    if (known && !BOOLEAN_ON.test(value)) names.add(known);
  }
  return [...names];
}

interface OverrideRow {
  database: string | null;
  role: string | null;
  setconfig: string[];
}

/**
 * Resets what the owner may have set with ALTER DATABASE/ROLE ... SET to lift the storage
 * limit, for the application role (in any database or all) and the application database.
 * Settings apply at session start, so every new session is read-only again at the limit.
 */
export async function resetReadOnlyOverrides(
  client: pg.Client,
  databaseName: string,
): Promise<string[]> {
  const { rows } = await client.query<OverrideRow>(
    `SELECT d.datname AS database, r.rolname AS role, s.setconfig
       FROM pg_db_role_setting s
       LEFT JOIN pg_database d ON d.oid = s.setdatabase
       LEFT JOIN pg_roles r ON r.oid = s.setrole
      WHERE r.rolname = $1 OR (d.datname = $1 AND s.setrole = 0)`,
    [databaseName],
  );
  const reset: string[] = [];
  for (const row of rows) {
    for (const name of liftingSettings(row.setconfig)) {
      await client.query(`${alterTarget(row)} RESET ${name}`);
      reset.push(`${name} of ${row.role ?? 'database'} ${row.database ?? ''}`.trim());
    }
  }
  return reset;
}

function alterTarget(row: OverrideRow): string {
  if (row.role === null) return `ALTER DATABASE ${quoteIdent(row.database ?? '')}`;
  const role = `ALTER ROLE ${quoteIdent(row.role)}`;
  return row.database === null ? role : `${role} IN DATABASE ${quoteIdent(row.database)}`;
}

/** What the driver keeps a server to, whatever its owner does inside it. */
export interface ServerLimits {
  databaseName: string;
  /**
   * temp_file_limit, in kB (server-size.ts's tempFileLimitKb), set with ALTER SYSTEM;
   * undefined where the platform sets it (CNPG's Cluster parameters).
   */
  tempFileLimitKb?: number;
  /** The server is read-only at its storage limit. */
  atLimit: boolean;
}

/**
 * Ends the application role's and database's sessions: those that started while an
 * override was set keep it for their whole life, and would go on writing at the limit.
 */
async function endSessions(client: pg.Client, databaseName: string): Promise<number> {
  const { rowCount } = await client.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
        AND (usename = $1 OR datname = $1)`,
    [databaseName],
  );
  return rowCount ?? 0;
}

/**
 * In a superuser session: resets settings that would lift the read-only mode (at the
 * limit, ending the sessions that started under them), and sets temp_file_limit when the
 * server has another (servers made before it was set, or restored from their data);
 * answers what it changed.
 */
export async function enforceServerLimits(
  client: pg.Client,
  limits: ServerLimits,
): Promise<string[]> {
  // At the limit this session's transactions would be read-only too; it must write.
  await client.query('SET default_transaction_read_only = off');
  const changed = (await resetReadOnlyOverrides(client, limits.databaseName)).map(
    (setting) => `reset ${setting}`,
  );
  if (changed.length > 0 && limits.atLimit)
    changed.push(`ended ${await endSessions(client, limits.databaseName)} sessions`);
  if (limits.tempFileLimitKb === undefined) return changed;
  const { rows } = await client.query<{ setting: string }>(
    "SELECT setting FROM pg_settings WHERE name = 'temp_file_limit'",
  );
  if (rows[0]?.setting !== String(limits.tempFileLimitKb)) {
    // temp_file_limit is superuser-only: the owner cannot set it back.
    await client.query(`ALTER SYSTEM SET temp_file_limit = '${limits.tempFileLimitKb}kB'`);
    await client.query('SELECT pg_reload_conf()');
    changed.push(`set temp_file_limit ${limits.tempFileLimitKb}kB`);
  }
  return changed;
}

/**
 * What a server takes against its storage limit: its databases, and the WAL its
 * replication slots keep on its disk (the PITR archive's slot holds WAL until it is
 * archived; a stalled archive would otherwise fill the disk unseen). Also on a held
 * server, which replays rather than writes.
 */
const USED_BYTES = `
  SELECT ((SELECT sum(pg_database_size(oid)) FROM pg_database)
        + coalesce((SELECT max(pg_wal_lsn_diff(
                       CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                            ELSE pg_current_wal_lsn() END,
                       restart_lsn))
                      FROM pg_replication_slots WHERE restart_lsn IS NOT NULL), 0))::text AS bytes`;

export async function measureUsedBytes(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(USED_BYTES);
  return Number(rows[0]?.bytes ?? 0);
}
