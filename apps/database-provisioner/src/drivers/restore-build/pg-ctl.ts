import type { PgCtlAction, PgTools } from '@pgcloud/postgres';
import { runPgCtl } from '@pgcloud/postgres';

/**
 * `pg_ctl -w <action>` on one data directory, as the OS user; killed when the tools'
 * signal aborts. `args` are the options besides -D, -w and the action.
 */
export function pgCtl(
  tools: PgTools,
  pgdata: string,
  action: PgCtlAction,
  args: string[],
): Promise<void> {
  const { osUser, signal } = tools;
  return runPgCtl(tools.binDir, pgdata, action, args, { osUser, ...(signal ? { signal } : {}) });
}
