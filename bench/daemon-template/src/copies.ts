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

/** Milliseconds from sending a daemon request to its answer, checked for `status`. */
async function timeRequest(
  send: () => Promise<{ status: number; body: unknown }>,
  status: number,
  what: string,
): Promise<number> {
  const started = performance.now();
  const answer = await send();
  const answered = performance.now();
  if (answer.status !== status)
    throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answered - started;
}

/** Milliseconds of POST /databases/{template}/snapshots to its 201 answer. */
export function timeSnapshot(api: ApiClient, snapshot: string): Promise<number> {
  return timeRequest(
    () => api.post(`/databases/${TEMPLATE}/snapshots`, { name: snapshot }),
    201,
    'POST .../snapshots',
  );
}

/** Milliseconds of POST /databases/{template}/reset to its 200 answer (the detail record). */
export function timeReset(api: ApiClient, snapshot: string): Promise<number> {
  return timeRequest(
    () => api.post(`/databases/${TEMPLATE}/reset`, { snapshot }),
    200,
    'POST .../reset',
  );
}

/** Deletes a snapshot of the template. */
export async function deleteSnapshot(api: ApiClient, snapshot: string): Promise<void> {
  await timeRequest(
    () => api.delete(`/databases/${TEMPLATE}/snapshots/${snapshot}`),
    200,
    'DELETE .../snapshots',
  );
}
