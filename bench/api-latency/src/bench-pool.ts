import pg from 'pg';

/**
 * The pool the baseline and the floor query with: ten connections, as TypeORM's default
 * pool in project-service, so no target gets more database concurrency than another. An
 * idle connection that breaks (the run's database dropped at the end of a failed run) is
 * reported rather than thrown at the process, so the run's own error is the one printed.
 */
export function benchPool(databaseUrl: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on('error', (err) => console.error(`an idle bench connection failed: ${err.message}`));
  return pool;
}
