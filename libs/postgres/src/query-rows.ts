/** Anything TypeORM runs raw SQL on: a DataSource, an EntityManager, a QueryRunner. */
export interface SqlExecutor {
  query(sql: string, values?: unknown[]): Promise<unknown>;
}

/**
 * Runs SQL and returns its rows. TypeORM answers UPDATE and DELETE with [rows, rowCount]
 * but everything else with the rows alone; rows are objects, never arrays, so the two
 * shapes cannot be confused.
 */
export async function queryRows<T>(
  executor: SqlExecutor,
  sql: string,
  values: unknown[],
): Promise<T[]> {
  return rowsOf<T>(await executor.query(sql, values));
}

/** The rows of a raw TypeORM query answer, whichever shape it came in. */
export function rowsOf<T>(answer: unknown): T[] {
  if (!Array.isArray(answer)) return [];
  if (answer.length === 2 && Array.isArray(answer[0]) && typeof answer[1] === 'number')
    return answer[0] as T[];
  return answer as T[];
}
