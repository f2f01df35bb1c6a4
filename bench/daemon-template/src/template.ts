import type { LocalDatabaseDetail, LocalDatabaseList } from '@pgcloud/contracts';
import type { ApiClient, ApiResponse, SuccessBody } from '@pgcloud/testing';
import pg from 'pg';

/** The template every copy is made from. */
export const TEMPLATE = 'bench_template';
// About 140 bytes a row with its header: 600,000 rows, a primary key and one more index
// come to about 100 MB on disk.
const DEFAULT_ROWS = 600_000;

/** Throws unless the daemon answered with that status. */
export function expectStatus(response: ApiResponse<unknown>, status: number, what: string): void {
  if (response.status !== status)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
}

/**
 * Makes the template through the daemon and fills it as its user would, over the
 * returned connection string. VACUUM sets the hint bits and the visibility map once, so
 * no copy inherits that work. Answers the template's detail record, filled.
 */
export async function makeTemplate(
  api: ApiClient,
  rows = DEFAULT_ROWS,
): Promise<LocalDatabaseDetail> {
  const created = await api.post<SuccessBody<LocalDatabaseDetail>>('/databases', {
    name: TEMPLATE,
  });
  expectStatus(created, 201, 'POST /databases');
  const client = new pg.Client({ connectionString: created.body.data.connection.connectionString });
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE orders (id bigint PRIMARY KEY, customer int NOT NULL, note text NOT NULL)',
    );
    await client.query(
      `INSERT INTO orders
       SELECT g, g % 1000, md5(g::text) || repeat('x', 60) FROM generate_series(1, $1::int) AS g`,
      [rows],
    );
    await client.query('CREATE INDEX orders_by_customer ON orders (customer)');
    await client.query('VACUUM ANALYZE orders');
  } finally {
    await client.end();
  }
  const shown = await api.get<SuccessBody<LocalDatabaseDetail>>(`/databases/${TEMPLATE}`);
  expectStatus(shown, 200, `GET /databases/${TEMPLATE}`);
  return shown.body.data;
}

/** Deletes every database of the daemon but the template (the runs' copies). */
export async function deleteCopies(api: ApiClient): Promise<void> {
  const listed = await api.get<SuccessBody<LocalDatabaseList>>('/databases');
  expectStatus(listed, 200, 'GET /databases');
  for (const { name } of listed.body.data.databases) {
    if (name !== TEMPLATE)
      expectStatus(await api.delete(`/databases/${name}`), 200, `DELETE /databases/${name}`);
  }
}
