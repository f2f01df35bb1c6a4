import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

/** A statement by name, as PostgreSQL keeps it prepared on a connection. */
export interface PreparedStatement {
  /** One name per text: a connection refuses a name it prepared with another text. */
  name: string;
  text: string;
}

/**
 * Runs a prepared statement on the DataSource's own pool, past TypeORM's query runner: each
 * connection parses and plans it once, then only binds and runs it. For the reads on the
 * path of many requests: on GET /projects under load this halved PostgreSQL's CPU per
 * request (bench/results/2026-11-27-api-latency-3.md).
 */
export async function queryPrepared<T extends object>(
  dataSource: DataSource,
  statement: PreparedStatement,
  values: unknown[],
): Promise<T[]> {
  const pool = (dataSource.driver as PostgresDriver).master as pg.Pool;
  const { rows } = await pool.query<T>({ ...statement, values });
  return rows;
}
