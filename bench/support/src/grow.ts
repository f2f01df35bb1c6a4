// The database grown from one size to the next: rows of md5 text added to `filler`
// (bulkDatabase's table, ids 1, 2, ... with none missing) until its data directory is about
// the size asked for, as `du -sb` counts it (WAL included, as backup-throughput measures,
// unless asked otherwise).
import { join } from 'node:path';
import pg from 'pg';
import { dataDirectoryBytes } from './https-s3-database.js';

// A row takes about 170 bytes in the table (6,000,000 rows come to about 1 GB), and about
// as much again in WAL while pg_wal grows toward max_wal_size: each step adds half what is
// missing, so the data directory comes near the size from below rather than past it.
const ROW_BYTES = 170;
const MIN_ROWS = 10_000;
// Near enough: the WAL alone moves the data directory by a few percent.
const NEAR = 0.97;
const MAX_STEPS = 40;

/** The data directory's bytes once grown, the rows the table holds, and the database's bytes. */
export interface Grown {
  bytes: number;
  rows: number;
  /** pg_database_size: the database's own files, without the WAL and the other databases. */
  databaseBytes: number;
}

/**
 * Adds rows until the data directory `pgdata` holds at least 97% of `targetBytes` (nothing
 * when it already does), over a TLS session as the database's own user. With `withoutWal`,
 * pg_wal is left out of the count: after gigabytes of writes it keeps up to max_wal_size of
 * segments, which would pass for data.
 */
export async function growTo(
  connection: { connectionString: string; caPem: string },
  pgdata: string,
  targetBytes: number,
  { withoutWal = false }: { withoutWal?: boolean } = {},
): Promise<Grown> {
  const measure = () =>
    dataDirectoryBytes(pgdata) - (withoutWal ? dataDirectoryBytes(join(pgdata, 'pg_wal')) : 0);
  const url = new URL(connection.connectionString);
  url.searchParams.delete('sslmode');
  const client = new pg.Client({ connectionString: url.toString(), ssl: { ca: connection.caPem } });
  await client.connect();
  try {
    const max = await client.query<{ n: string }>(
      'SELECT coalesce(max(id), 0)::text AS n FROM filler',
    );
    let rows = Number(max.rows[0]?.n);
    let bytes = measure();
    for (let step = 0; bytes < targetBytes * NEAR; step++) {
      if (step === MAX_STEPS)
        throw new Error(`the data directory stays at ${bytes} bytes, short of ${targetBytes}`);
      const more = Math.max(MIN_ROWS, Math.ceil((targetBytes - bytes) / 2 / ROW_BYTES));
      await client.query(
        `INSERT INTO filler SELECT g,
           md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text)
         FROM generate_series($1::bigint, $2::bigint) g`,
        [rows + 1, rows + more],
      );
      rows += more;
      bytes = measure();
    }
    const size = await client.query<{ b: string }>(
      'SELECT pg_database_size(current_database())::text AS b',
    );
    return { bytes, rows, databaseBytes: Number(size.rows[0]?.b) };
  } finally {
    await client.end();
  }
}
