import type { Drill } from '@pgcloud/api-client';
import { createDrill, getDrill, listDrills, unwrap } from '@pgcloud/api-client';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import { databaseScope } from '../database-scope.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderFields, renderTable } from '../output.js';
import { Progress, pollUntil } from '../progress.js';

/** `drills list|run|get`: restore drills of one database (docs/api/drills.md). */
export function registerDrillCommands(program: Command): void {
  const drills = program
    .command('drills')
    .description("Prove a database's backups restorable: restore drills, their checks");

  withCommonOptions(
    drills.command('list').description('List the drills of the database, newest first'),
    'database',
  ).action(
    runs(async (ctx) => {
      const { client, path } = await databaseScope(ctx);
      const answer = await unwrap(listDrills({ client, path }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.drills, [
            { header: 'id', value: (d) => d.id },
            { header: 'kind', value: (d) => d.kind },
            { header: 'status', value: (d) => d.status },
            { header: 'backup', value: (d) => d.backup_id },
            { header: 'restore s', value: (d) => d.restore_seconds },
            { header: 'started', value: (d) => d.started_at },
          ]),
        () => answer.drills.map((d) => d.id).join('\n'),
      );
    }),
  );

  withCommonOptions(
    drills
      .command('run')
      .description(
        "Restore the database's newest backup (and PITR archive) into a scratch server, check it, remove it",
      )
      .option('--wait', 'wait until it passed (or failed), showing its phase on stderr'),
    'database',
  ).action(runs(run));

  withCommonOptions(
    drills.command('get').description('Show a drill and its checks').argument('<drill-id>'),
    'database',
  ).action(
    runs(async (ctx, drill_id: string) => {
      const { client, path } = await databaseScope(ctx);
      const drill = await unwrap(getDrill({ client, path: { ...path, drill_id } }));
      ctx.out.result(
        drill,
        () => showDrill(drill),
        () => drill.status,
      );
    }),
  );
}

async function run(ctx: CliContext): Promise<void> {
  const { client, path } = await databaseScope(ctx);
  const created = await unwrap(createDrill({ client, path }));
  if (!(ctx.options as { wait?: boolean }).wait) {
    ctx.out.result(
      created,
      () => showDrill(created),
      () => created.id,
    );
    ctx.out.note(`Follow it with \`pgcloud drills get ${created.id}\`, or run with --wait.`);
    return;
  }
  const drill_id = created.id;
  const final = await pollUntil({
    read: () => unwrap(getDrill({ client, path: { ...path, drill_id } })),
    done: (drill) => drill.status === 'passed' || drill.status === 'failed',
    state: (drill) => ({ phase: drill.phase }),
    progress: new Progress(ctx.out, `drill ${drill_id}`),
  });
  if (final.status === 'failed') {
    if (ctx.out.mode.json) ctx.out.result(final, () => '');
    else ctx.out.note(showDrill(final));
    throw new CliError(
      EXIT.error,
      'DRILL_FAILED',
      `drill ${drill_id} failed: ${final.error ?? 'the API gave no reason'}`,
    );
  }
  ctx.out.result(
    final,
    () => showDrill(final),
    () => final.status,
  );
}

/** A drill, its checks one a line. */
export function showDrill(drill: Drill): string {
  return renderFields([
    ['id', drill.id],
    ['kind', drill.kind],
    ['status', drill.status],
    ['phase', drill.phase],
    ['backup', drill.backup_id],
    ...(drill.target_time ? [['target time', drill.target_time] as [string, unknown]] : []),
    ...(drill.target_lsn ? [['replayed to', drill.target_lsn] as [string, unknown]] : []),
    ...(drill.restore_seconds !== undefined
      ? [['restore', `${drill.restore_seconds.toFixed(1)} s`] as [string, unknown]]
      : []),
    ['started', drill.started_at],
    ...(drill.completed_at ? [['completed', drill.completed_at] as [string, unknown]] : []),
    ...(drill.error ? [['error', drill.error] as [string, unknown]] : []),
    ...drill.checks.map(
      (check) =>
        [`  ${check.name}`, `${check.passed ? 'passed' : 'FAILED'}: ${check.detail}`] as [
          string,
          unknown,
        ],
    ),
  ]);
}
