import type { Client } from '@pgcloud/api-client';
import type { CliContext } from './context.js';

/** The client and path of a command on one database (`--project` and `--db`). */
export async function databaseScope(
  ctx: CliContext,
): Promise<{ client: Client; path: { project_id: string; name: string } }> {
  const name = ctx.database;
  const client = ctx.api();
  return { client, path: { project_id: await ctx.projectId(), name } };
}
