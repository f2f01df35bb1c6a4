import pg from 'pg';

// 50,000 rows of about 560 bytes: some 30 MB of WAL per committed INSERT.
const ROWS_PER_INSERT = 50_000;

/** What the writes left: the rows, the WAL they made, and the server's clock at their end. */
export interface Written {
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
 * INSERTs wide rows into a table `wal_filler`, one committed batch after another, until the
 * server has written at least `walBytes` of WAL since the first. The payload (512 bytes of
 * md5 text) stays below TOAST's threshold, so it is written as is, not compressed.
 */
export async function writeWal(client: pg.Client, walBytes: number): Promise<Written> {
  await client.query('CREATE TABLE wal_filler (id bigint PRIMARY KEY, payload text NOT NULL)');
  const start = await walPosition(client);
  let rows = 0;
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
 * Commits one row into a table of its own and answers the server's clock after it. Recovery
 * to a time stops at the first commit past it; with none in the archive it fails at the end
 * of the WAL, and pgcloud starts it again without a target. With this one archived, both
 * restores stop on it at the first try.
 */
export async function commitMarker(client: pg.Client): Promise<Date> {
  await client.query('CREATE TABLE IF NOT EXISTS after_target (at timestamptz NOT NULL)');
  await client.query('INSERT INTO after_target VALUES (clock_timestamp())');
  return serverClock(client);
}

/** The rows of `wal_filler` a restored database holds. */
export async function countRows(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM wal_filler');
  return Number(rows[0]?.n);
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
