import { Injectable } from '@nestjs/common';
import type { BackupSource } from '@pgcloud/contracts';
import { CATALOG_SEARCH_PATH, formatLsn, parseLsn } from '@pgcloud/postgres';
import pg from 'pg';

/** The physical replication slot that keeps a database's WAL until it is in S3. */
export const PITR_SLOT = 'pgcloud_pitr';
const WAL_PAGE_BYTES = 8192n;
const SHORT_PAGE_HEADER = 24n;
const LONG_PAGE_HEADER = 40n;
const SEGMENT_BYTES = 16n * 1024n * 1024n;
const TIMEOUT_MS = 10_000;
const COMMIT_STAMP_MARGIN_MS = 100;
// How often the receiver's flush position is read while waiting for it to reach a sample.
const FLUSH_LOOK_EVERY_MS = 10;

/** What the primary says at one moment: its clock, how far its WAL reaches, and our receiver. */
export interface PrimarySample {
  /** The primary's clock, in whole milliseconds, read before the WAL position. */
  at: Date;
  /** The end of the WAL inserted so far: every commit stamped at or before `at` lies below. */
  lsn: bigint;
  /** How far our pg_receivewal has written and synced (null until it reports). */
  flushed: bigint | null;
  /** Whether our pg_receivewal is connected and streaming. */
  streaming: boolean;
}

/**
 * A session on a database's server as the replication role (TLS, verify-full): the slot,
 * and samples of the primary's clock and WAL position that make the recovery window honest.
 */
export class PrimarySession {
  private constructor(private readonly client: pg.Client) {}

  static async open(source: BackupSource): Promise<PrimarySession> {
    const client = new pg.Client({
      host: source.host,
      port: source.port,
      database: 'postgres',
      user: source.user,
      password: source.password,
      ssl: { ca: source.ca_pem, rejectUnauthorized: true },
      application_name: 'pgcloud_pitr_worker',
      // Names resolve in the catalog, whatever the database's owner set.
      options: CATALOG_SEARCH_PATH,
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: TIMEOUT_MS,
    });
    client.on('error', () => undefined); // a dropped connection surfaces at the next query
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new Error(`cannot reach the database's server: ${(err as Error).message}`);
    }
    return new PrimarySession(client);
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  /**
   * Makes the slot afresh, reserving WAL from now on; answers where it starts and the
   * server's timeline.
   */
  async createSlot(): Promise<{ lsn: bigint; timeline: number }> {
    await this.dropSlot();
    const { rows } = await this.client.query<{ lsn: string; walfile: string }>(
      `SELECT lsn::text AS lsn, pg_walfile_name(lsn) AS walfile
         FROM pg_create_physical_replication_slot($1, true)`,
      [PITR_SLOT],
    );
    const row = rows[0];
    if (!row) throw new Error('the replication slot was not created');
    return { lsn: parseLsn(row.lsn), timeline: Number.parseInt(row.walfile.slice(0, 8), 16) };
  }

  /**
   * Whether the slot still holds the archive's WAL (it is gone after an in-place restore,
   * and `lost` once the server dropped WAL past max_slot_wal_keep_size), and the timeline.
   */
  async state(): Promise<{ slotExists: boolean; timeline: number }> {
    const { rows } = await this.client.query<{ slot: boolean; walfile: string }>(
      `SELECT EXISTS (SELECT 1 FROM pg_replication_slots
                       WHERE slot_name = $1 AND wal_status IS DISTINCT FROM 'lost') AS slot,
              pg_walfile_name(pg_current_wal_lsn()) AS walfile`,
      [PITR_SLOT],
    );
    const row = rows[0];
    if (!row) throw new Error('the server answered nothing');
    return { slotExists: row.slot, timeline: Number.parseInt(row.walfile.slice(0, 8), 16) };
  }

  async dropSlot(): Promise<void> {
    await this.client.query(
      `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`,
      [PITR_SLOT],
    );
  }

  /** Lets the server recycle WAL below `lsn` (it never moves the slot back). */
  async advanceSlot(lsn: bigint): Promise<void> {
    await this.client.query(`SELECT pg_replication_slot_advance($1, $2::text::pg_lsn)`, [
      PITR_SLOT,
      formatLsn(lsn),
    ]);
  }

  /**
   * Where our pg_receivewal has flushed to, read again until it reaches `lsn` or `waitMs`
   * has passed (null while it is not connected).
   */
  async flushedReaching(
    applicationName: string,
    lsn: bigint,
    waitMs: number,
  ): Promise<bigint | null> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const { rows } = await this.client.query<{ flushed: string | null }>(
        `SELECT flush_lsn::text AS flushed FROM pg_stat_replication WHERE application_name = $1`,
        [applicationName],
      );
      const flushed = rows[0]?.flushed ? parseLsn(rows[0].flushed) : null;
      if (flushed === null || flushed >= lsn || Date.now() >= deadline) return flushed;
      await new Promise((resolve) => setTimeout(resolve, FLUSH_LOOK_EVERY_MS));
    }
  }

  async sample(applicationName: string): Promise<PrimarySample> {
    // The clock first, then the WAL position: a commit stamped before the clock reading
    // was inserted before the position was read. A backend stamps its commit time just
    // before it inserts the commit record; the margin covers one that is descheduled in
    // between (microseconds, rarely milliseconds).
    const { rows } = await this.client.query<{
      at_ms: string;
      lsn: string;
      flushed: string | null;
      state: string | null;
    }>(
      `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - $2 AS at_ms,
              pg_current_wal_insert_lsn()::text AS lsn,
              r.flush_lsn::text AS flushed, r.state
         FROM (SELECT 1) AS one
         LEFT JOIN pg_stat_replication r ON r.application_name = $1`,
      [applicationName, COMMIT_STAMP_MARGIN_MS],
    );
    const row = rows[0];
    if (!row) throw new Error('the server answered no sample');
    return {
      at: new Date(Number(row.at_ms)),
      lsn: withoutPageHeader(parseLsn(row.lsn)),
      flushed: row.flushed === null ? null : parseLsn(row.flushed),
      streaming: row.state === 'streaming',
    };
  }
}

/** Opens sessions on databases' servers: the one way in, so a unit spec can replace it. */
@Injectable()
export class PrimarySessions {
  open(source: BackupSource): Promise<PrimarySession> {
    return PrimarySession.open(source);
  }
}

/**
 * The insert position points past a page header when the last record ended at a page
 * boundary; no WAL data lies in that header, and a receiver stops at the boundary.
 */
export function withoutPageHeader(lsn: bigint): bigint {
  const inPage = lsn % WAL_PAGE_BYTES;
  const header = lsn % SEGMENT_BYTES === LONG_PAGE_HEADER ? LONG_PAGE_HEADER : SHORT_PAGE_HEADER;
  return inPage === header ? lsn - header : lsn;
}
