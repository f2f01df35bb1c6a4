import { performance } from 'node:perf_hooks';
import type { LocalConnection, LocalDatabaseDetail } from '@pgcloud/contracts';
import type { OsUser } from '@pgcloud/postgres';
import { pgBinDir, runPgTool } from '@pgcloud/postgres';
import type { ApiClient, SuccessBody } from '@pgcloud/testing';
import { TEMPLATE, expectStatus } from './template.js';

/** Milliseconds from sending POST /databases with the template to the 201 answer. */
export async function timeDaemonCopy(api: ApiClient, name: string): Promise<number> {
  const started = performance.now();
  const created = await api.post<SuccessBody<LocalDatabaseDetail>>('/databases', {
    name,
    template: TEMPLATE,
  });
  const answered = performance.now();
  expectStatus(created, 201, 'POST /databases');
  return answered - started;
}

/**
 * Milliseconds of `createdb -T` by hand on the same server, as the same login role over
 * the same TCP address: PostgreSQL 15's default strategy (WAL_LOG), from starting the
 * program to its exit.
 */
export async function timeCreatedb(
  connection: LocalConnection,
  name: string,
  osUser: OsUser,
): Promise<number> {
  const args = ['-h', connection.host, '-p', String(connection.port), '-U', connection.user];
  const started = performance.now();
  await runPgTool(
    pgBinDir(process.env['PG_BIN_DIR']),
    'createdb',
    [...args, '-T', TEMPLATE, name],
    {
      osUser,
      env: { PGPASSWORD: connection.password },
    },
  );
  return performance.now() - started;
}
