import type { PgTools } from '@pgcloud/postgres';
import { runPgTool } from '@pgcloud/postgres';

/** pg_ctl on one data directory, as the OS user; killed when the tools' signal aborts. */
export function pgCtl(tools: PgTools, pgdata: string, args: string[]): Promise<unknown> {
  const { osUser, signal } = tools;
  return runPgTool(tools.binDir, 'pg_ctl', ['-D', pgdata, ...args], {
    osUser,
    ...(signal ? { signal } : {}),
  });
}
