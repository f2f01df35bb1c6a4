import pg from 'pg';

// 50,000 rows of about 560 bytes: some 30 MB of WAL per committed INSERT.
const ROWS_PER_INSERT = 50_000;
// No autovacuum on either table: the first vacuum of a freshly written table writes about
// as much WAL as the table (its pages' images, data checksums being on), gigabytes that
// would be written, and archived twice, while the samples run.
const CREATE_FILLER = `CREATE TABLE IF NOT EXISTS wal_filler (id bigint PRIMARY KEY, payload text NOT NULL)
  WITH (autovacuum_enabled = off)`;

/** What the writes left: the rows, the WAL they made, and the server's clock at their end. */
export interface Written {
  /** The rows `wal_filler` holds after them, those of earlier writes included. */
  rows: number;
  walBytes: number;
  /** Read after the last commit: every row is committed at or before it. */
  endedAt: Date;
}

/** A session on the database over TLS, checked against the stack's CA. */
export async function connect(connectionString: string, caPem: string): Promise<pg.Client> {
  const url = new URL(connectionString);
  url.searchParams.delete('sslmode');
  const client = new pg.Client({ connectionString: url.toString(), ssl: { ca: caPem } });
  await client.connect();
  return client;
}

/**
 * Empties `wal_filler` (made the first time; no autovacuum on it nor on `filler`, the table
 * growTo fills) before a size is grown and backed up: the last size's rows, about as many
 * bytes as their WAL, would otherwise lie in the next size's base backup, gigabytes past
 * the size asked for.
 */
export async function clearWrites(connectionString: string, caPem: string): Promise<void> {
  const client = await connect(connectionString, caPem);
  try {
    await client.query(CREATE_FILLER);
    await client.query('ALTER TABLE filler SET (autovacuum_enabled = off)');
    await client.query('TRUNCATE wal_filler');
  } finally {
    await client.end();
  }
}

/**
 * INSERTs wide rows into a table `wal_filler` (made the first time, its ids going on from
 * the last row's), one committed batch after another, until the server has written at
 * least `walBytes` of WAL since the first. The payload (512 bytes of md5 text) stays below
 * TOAST's threshold, so it is written as is, not compressed. The marker of an earlier
 * target is deleted first: at the target to come, `after_target` is empty.
 */
export async function writeWal(client: pg.Client, walBytes: number): Promise<Written> {
  await client.query(CREATE_FILLER);
  await client.query('CREATE TABLE IF NOT EXISTS after_target (at timestamptz NOT NULL)');
  await client.query('DELETE FROM after_target');
  const last = await client.query<{ n: string }>(
    'SELECT coalesce(max(id), 0)::text AS n FROM wal_filler',
  );
  const start = await walPosition(client);
  let rows = Number(last.rows[0]?.n);
  let written = 0;
  while (written < walBytes) {
    await client.query(
      `INSERT INTO wal_filler
       SELECT g, repeat(md5(g::text || random()::text), 16) FROM generate_series($1::bigint, $2::bigint) g`,
      [rows + 1, rows + ROWS_PER_INSERT],
    );
    rows += ROWS_PER_INSERT;
    written = (await walPosition(client)) - start;
  }
  return { rows, walBytes: written, endedAt: await serverClock(client) };
}

/**
 * Commits one row into `after_target` (writeWal makes it) and answers the server's clock
 * after it. Recovery to a time stops at the first commit past it; with none in the archive
 * it fails at the end of the WAL, and pgcloud starts it again without a target. With this
 * one archived, every restore stops on it at the first try.
 */
export async function commitMarker(client: pg.Client): Promise<Date> {
  await client.query('INSERT INTO after_target VALUES (clock_timestamp())');
  return serverClock(client);
}

/** What a restored database answers to it: its rows of `wal_filler`, then of `after_target`. */
export const RESTORED_SQL =
  "SELECT (SELECT count(*) FROM wal_filler) || ' ' || (SELECT count(*) FROM after_target)";

/**
 * Checks a restored database's answer to RESTORED_SQL: every row written up to the target,
 * and no marker (it was committed after the target). Answers the rows; throws otherwise.
 */
export function checkRestored(way: string, answer: string, writtenRows: number): number {
  const [rows, markers] = answer.trim().split(' ').map(Number);
  if (rows !== writtenRows || markers !== 0)
    throw new Error(
      `${way} restored ${rows} rows and ${markers} markers, not ${writtenRows} rows and none`,
    );
  return rows;
}

async function walPosition(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS bytes`,
  );
  return Number(rows[0]?.bytes);
}

async function serverClock(client: pg.Client): Promise<Date> {
  const { rows } = await client.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  const now = rows[0]?.now;
  if (!now) throw new Error('the server answered no time');
  return now;
}
