import type { BranchFromDto, CreateDatabaseDto } from '@pgcloud/api-client';
import { createDatabase, listDatabaseBranches, unwrap } from '@pgcloud/api-client';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderTable } from '../output.js';
import { expiryOf, scope, showDatabase, waitUntilRunning } from './databases.js';

/** `db branch` and `db branches` (docs/api/databases.md#branches), under `db`. */
export function registerBranchCommands(db: Command): void {
  withCommonOptions(
    db
      .command('branch')
      .description('Make a new database as a copy of another one, now or at a past point')
      .argument('<source>', 'the database to branch from (in --project)')
      .argument('<name>', 'the new database')
      .option('--at <time>', 'as of this time (ISO 8601 with its zone): needs PITR')
      .option('--lsn <lsn>', 'through this WAL position, such as 0/3000148: needs PITR')
      .option('--restore-point <name>', 'at this restore point: needs PITR')
      .option('--expires-in <duration>', 'delete it this long from now: 24h, 7d (Free: 30d)')
      .option('--wait', 'wait until it is running (or failed), showing progress on stderr'),
    'project',
  ).action(runs(branch));

  withCommonOptions(
    db
      .command('branches')
      .description('List the databases branched from a database')
      .argument('<name>', 'the database'),
    'project',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, project_id } = await scope(ctx);
      const answer = await unwrap(listDatabaseBranches({ client, path: { project_id, name } }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.branches, [
            { header: 'name', value: (b) => b.name },
            { header: 'project', value: (b) => b.project_id },
            { header: 'status', value: (b) => b.status },
            { header: 'copied at', value: (b) => b.parent?.at ?? '' },
          ]),
        () => answer.branches.map((b) => b.name).join('\n'),
      );
    }),
  );
}

/** `db branch SOURCE NEW [--at|--lsn|--restore-point] [--expires-in] [--wait]`. */
async function branch(ctx: CliContext, source: string, name: string): Promise<void> {
  const flags = ctx.options as BranchFlags;
  const { client, project_id } = await scope(ctx);
  const created = await unwrap(
    createDatabase({ client, path: { project_id }, body: branchBody(source, name, flags) }),
  );
  if (!flags.wait) {
    ctx.out.result(
      created,
      () => showDatabase(created),
      () => created.id,
    );
    ctx.out.note(`Follow it with \`pgcloud db get ${name}\`, or branch with --wait next time.`);
    return;
  }
  await waitUntilRunning(ctx, client, project_id, name);
}

/** The flags of `db branch`. */
export interface BranchFlags {
  at?: string;
  lsn?: string;
  restorePoint?: string;
  expiresIn?: string;
  wait?: boolean;
}

/** The POST body of a branch: the source in the same project, at most one target. */
export function branchBody(
  source: string,
  name: string,
  flags: BranchFlags,
  nowMs = Date.now(),
): CreateDatabaseDto {
  const targets = [flags.at, flags.lsn, flags.restorePoint].filter((t) => t !== undefined);
  if (targets.length > 1)
    throw new CliError(
      EXIT.usage,
      'ONE_TARGET',
      'give at most one of --at, --lsn and --restore-point',
    );
  const from: BranchFromDto = { database: source };
  if (flags.at !== undefined) from.target_time = flags.at;
  if (flags.lsn !== undefined) from.target_lsn = flags.lsn;
  if (flags.restorePoint !== undefined) from.target_restore_point = flags.restorePoint;
  const body: CreateDatabaseDto = { name, from };
  if (flags.expiresIn !== undefined) body.expires_at = expiryOf({ in: flags.expiresIn }, nowMs);
  return body;
}
