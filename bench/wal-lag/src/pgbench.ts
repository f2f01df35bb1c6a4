import { join } from 'node:path';
import type { OsUser } from '@pgcloud/postgres';
import { pgBinDir, resolveOsUser, runPgTool } from '@pgcloud/postgres';
import type { BulkDatabase } from '@pgcloud/bench-support';

// Room past the run's own length for pgbench's vacuum and connections.
const SLACK_MS = 5 * 60_000;

/**
 * The database pgbench loads: pgbench runs as a user would, over the database's TLS
 * connection string; the housekeeping between runs goes through psql as the superuser, over
 * the server's Unix socket (the local driver's layout, as bench:backup reads it).
 */
export class PgbenchDatabase {
  private constructor(
    private readonly osUser: OsUser,
    private readonly bulk: BulkDatabase,
  ) {}

  static async of(bulk: BulkDatabase): Promise<PgbenchDatabase> {
    return new PgbenchDatabase(await resolveOsUser(process.env['PG_OS_USER'] ?? 'postgres'), bulk);
  }

  /** `pgbench -i -s <scale>`: the pgbench tables, 100,000 accounts per unit of scale. */
  async initialize(scale: number): Promise<void> {
    await this.pgbench(['-i', '-s', String(scale), '--quiet'], SLACK_MS);
  }

  /**
   * Transactions per second of `pgbench -c <clients> -T <seconds> -N` (the built-in
   * simple-update script), without the time to connect.
   */
  async tps(clients: number, seconds: number): Promise<number> {
    const output = await this.pgbench(
      ['-c', String(clients), '-T', String(seconds), '-N'],
      seconds * 1000 + SLACK_MS,
    );
    const match = /^tps = ([\d.]+)/m.exec(output);
    if (!match?.[1]) throw new Error(`pgbench printed no tps:\n${output}`);
    return Number(match[1]);
  }

  /**
   * VACUUM ANALYZE, then CHECKPOINT: every run starts with no dead rows for autovacuum to
   * chase in the middle of it, and pays the full-page images that follow a checkpoint (the
   * base backup of enabling PITR takes one) alike.
   */
  async settle(): Promise<void> {
    await this.psql('VACUUM ANALYZE');
    await this.psql('CHECKPOINT');
  }

  /** The server's WAL insert position, in bytes from the start of the WAL. */
  async walPosition(): Promise<number> {
    return Number(await this.psql(`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')`));
  }

  private async pgbench(args: string[], timeoutMs: number): Promise<string> {
    // pgbench takes a connection string from PGDATABASE as it would from its last argument,
    // which keeps the password off the command line.
    const { stdout } = await runPgTool(pgBinDir(), 'pgbench', args, {
      osUser: this.osUser,
      env: { PGDATABASE: this.bulk.connection.connection_string },
      timeoutMs,
    });
    return stdout;
  }

  private async psql(sql: string): Promise<string> {
    const { stack, database, connection } = this.bulk;
    const server = join(stack.dataDir, 'local', 'servers', database.platform_service_id);
    const { stdout } = await runPgTool(
      pgBinDir(),
      'psql',
      [
        ...['-h', join(server, 'socket'), '-p', String(connection.port)],
        ...['-U', 'postgres', '-d', connection.database, '-XAtc', sql],
      ],
      { osUser: this.osUser, timeoutMs: SLACK_MS },
    );
    return stdout.trim();
  }
}
