import type { Client, PitrConfig, WalReceiverStatus } from '@pgcloud/api-client';
import {
  ApiError,
  createRestorePoint,
  disablePitr,
  enablePitr,
  getPitrConfig,
  getPitrRestore,
  getReceiverStatus,
  getRecoveryWindow,
  listPitrRestores,
  listRestorePoints,
  listWalSegments,
  restartReceiver,
  restorePitr,
  unwrap,
} from '@pgcloud/api-client';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import { databaseScope } from '../database-scope.js';
import { integerIn } from '../database-options.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderFields, renderTable } from '../output.js';
import { formatBytes } from '../progress.js';
import { followRestore } from '../restore-progress.js';

/** `pitr status` with --json: the configuration, and the receiver's state when enabled. */
export interface PitrStatus {
  config: PitrConfig;
  receiver: WalReceiverStatus | null;
}

/**
 * `pitr enable|disable|status|window|wal|restore|restore-point|restore-points|restores|
 * restart-receiver`, on one database.
 */
export function registerPitrCommands(program: Command): void {
  const pitr = program
    .command('pitr')
    .description('Point-in-time recovery: enable it, watch its archive, restore to any second');

  withCommonOptions(
    pitr
      .command('enable')
      .description('Enable PITR (a base backup, then WAL streaming), or change its retention')
      .requiredOption(
        '--retention-days <days>',
        'days of WAL kept for restores, 1-35 (Free: at most 7)',
        integerIn(1, 35),
      ),
    'database',
  ).action(runs(enable));

  withCommonOptions(
    pitr.command('disable').description('Disable PITR: stop the WAL receiver and its slot'),
    'database',
  ).action(
    runs(async (ctx) => {
      const { client, path } = await databaseScope(ctx);
      const disabled = await unwrap(disablePitr({ client, path }));
      ctx.out.result(
        disabled,
        () => `PITR disabled for ${path.name}; its archive is deleted when its retention passes.`,
        () => String(disabled.enabled),
      );
    }),
  );

  withCommonOptions(
    pitr.command('status').description('Show the PITR configuration and the WAL receiver'),
    'database',
  ).action(runs(status));

  withCommonOptions(
    pitr.command('window').description('Show the span of time a PITR restore can reach'),
    'database',
  ).action(
    runs(async (ctx) => {
      const { client, path } = await databaseScope(ctx);
      const window = await unwrap(getRecoveryWindow({ client, path }));
      ctx.out.result(
        window,
        () =>
          renderFields([
            ['from', window.from],
            ['to', window.to],
            ['base backup', window.base_backup_time],
            ['latest wal', window.latest_wal_time],
          ]),
        () => `${window.from ?? ''} ${window.to ?? ''}`.trim(),
      );
    }),
  );

  withCommonOptions(
    pitr
      .command('wal')
      .description('List the archived WAL segments, oldest first, a page at a time')
      .option('--limit <n>', 'segments on this page, 1-1000 (default 100)', integerIn(1, 1000))
      .option('--cursor <cursor>', 'the next_cursor of the previous page'),
    'database',
  ).action(runs(wal));

  withCommonOptions(
    pitr
      .command('restore')
      .description(
        'Restore to a moment, a WAL position or a restore point, in place (read-only meanwhile) or --into a new database',
      )
      .option(
        '--to <time>',
        'an RFC 3339 time (2026-01-02T03:04:05.123456Z) within `pitr window`, or latest',
      )
      .option('--lsn <position>', 'or a WAL position (0/3000148), through its record')
      .option('--restore-point <name>', 'or a restore point of the archive (`pitr restore-points`)')
      .option('--into <name>', 'restore into this new database of the project, leaving the source')
      .option('--wait', 'wait until it is completed (or failed), showing progress on stderr')
      .option('--dry-run', 'show the plan and an estimate after every check; restore nothing'),
    'database',
  ).action(runs(restore));

  withCommonOptions(
    pitr
      .command('restore-point')
      .description('Name the current WAL position, for a later `pitr restore --restore-point`')
      .argument('<name>', 'unique in the archive; the rules of database names'),
    'database',
  ).action(
    runs(async (ctx, name: string) => {
      const { client, path } = await databaseScope(ctx);
      const point = await unwrap(createRestorePoint({ client, path, body: { name } }));
      ctx.out.result(
        point,
        () =>
          renderFields([
            ['restore point', point.name],
            ['lsn', point.lsn],
            ['created', point.created_at],
          ]),
        () => point.lsn,
      );
    }),
  );

  withCommonOptions(
    pitr
      .command('restore-points')
      .description('List the restore points of the current archive, oldest first'),
    'database',
  ).action(
    runs(async (ctx) => {
      const { client, path } = await databaseScope(ctx);
      const answer = await unwrap(listRestorePoints({ client, path }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.restore_points, [
            { header: 'name', value: (p) => p.name },
            { header: 'lsn', value: (p) => p.lsn },
            { header: 'created', value: (p) => p.created_at },
          ]),
        () => answer.restore_points.map((p) => p.name).join('\n'),
      );
    }),
  );

  withCommonOptions(
    pitr.command('restores').description('List the PITR restores of the database, newest first'),
    'database',
  ).action(
    runs(async (ctx) => {
      const { client, path } = await databaseScope(ctx);
      const answer = await unwrap(listPitrRestores({ client, path }));
      ctx.out.result(
        answer,
        () =>
          renderTable(answer.restores, [
            { header: 'id', value: (r) => r.id },
            {
              header: 'target',
              value: (r) => r.target_time ?? r.target_lsn ?? r.target_restore_point,
            },
            { header: 'into', value: (r) => r.target_database ?? '(in place)' },
            { header: 'status', value: (r) => r.status },
            { header: 'wal files', value: (r) => r.wal_files_applied },
            { header: 'started', value: (r) => r.started_at },
          ]),
        () => answer.restores.map((r) => r.id).join('\n'),
      );
    }),
  );

  withCommonOptions(
    pitr
      .command('restart-receiver')
      .description('Restart the WAL receiver (its error count starts again at 0)'),
    'database',
  ).action(
    runs(async (ctx) => {
      const { client, path } = await databaseScope(ctx);
      const receiver = await unwrap(restartReceiver({ client, path }));
      ctx.out.result(
        receiver,
        () => showReceiver(receiver),
        () => receiver.status,
      );
    }),
  );
}

async function enable(ctx: CliContext): Promise<void> {
  const retention_days = (ctx.options as { retentionDays: number }).retentionDays;
  const { client, path } = await databaseScope(ctx);
  const enabled = await unwrap(enablePitr({ client, path, body: { retention_days } }));
  ctx.out.result(
    enabled,
    () =>
      renderFields([
        ['enabled', enabled.enabled],
        ['retention', days(retention_days)],
        ['base backup', enabled.base_backup_id],
        ['wal receiver', enabled.wal_receiver_status],
      ]),
    () => enabled.base_backup_id,
  );
  ctx.out.note('The recovery window opens once the base backup completes (`pgcloud pitr window`).');
}

/** The configuration, and the receiver's state (only asked for when PITR is enabled). */
export async function readPitrStatus(
  client: Client,
  path: { project_id: string; name: string },
): Promise<PitrStatus> {
  const config = await unwrap(getPitrConfig({ client, path }));
  if (!config.enabled) return { config, receiver: null };
  try {
    return { config, receiver: await unwrap(getReceiverStatus({ client, path })) };
  } catch (error) {
    // Disabled between the two requests.
    if (error instanceof ApiError && error.code === 'PITR_NOT_ENABLED')
      return { config, receiver: null };
    throw error;
  }
}

async function status(ctx: CliContext): Promise<void> {
  const { client, path } = await databaseScope(ctx);
  const answer = await readPitrStatus(client, path);
  const { config, receiver } = answer;
  ctx.out.result(
    answer,
    () =>
      [
        renderFields([
          ['enabled', config.enabled],
          ['retention', config.retention_days === null ? null : days(config.retention_days)],
          ['base backup', config.base_backup_id],
          ['window from', config.recovery_window?.from],
          ['window to', config.recovery_window?.to],
          ...archiveFields(config),
        ]),
        ...(receiver ? ['', showReceiver(receiver)] : []),
      ].join('\n'),
    () => (config.enabled ? (receiver?.status ?? 'enabled') : 'disabled'),
  );
}

/** The archive's health as the last check in the object store found it, while enabled. */
function archiveFields(config: PitrConfig): [string, string | null | undefined][] {
  if (!config.enabled) return [];
  const archive = config.archive;
  if (!archive) return [['archive', 'not checked yet']];
  return [
    ['archive', archive.problem ? `${archive.state}: ${archive.problem}` : archive.state],
    ['newest WAL object', archive.newest_object_at],
    ['archive checked', archive.checked_at],
  ];
}

async function wal(ctx: CliContext): Promise<void> {
  const { limit, cursor } = ctx.options as { limit?: number; cursor?: string };
  const { client, path } = await databaseScope(ctx);
  const query = { ...(limit !== undefined ? { limit } : {}), ...(cursor ? { cursor } : {}) };
  const page = await unwrap(
    listWalSegments({ client, path, ...(Object.keys(query).length ? { query } : {}) }),
  );
  ctx.out.result(
    page,
    () =>
      [
        renderTable(page.archives, [
          { header: 'file', value: (a) => a.filename },
          { header: 'size', value: (a) => formatBytes(a.size_bytes) },
          { header: 'archived', value: (a) => a.archived_at },
        ]),
        '',
        `${page.total_count} segments, ${formatBytes(page.total_size_bytes)} in the archive.` +
          (page.next_cursor ? ` Next page: --cursor ${page.next_cursor}` : ''),
      ].join('\n'),
    () => page.archives.map((a) => a.filename).join('\n'),
  );
}

/** The one target of `pitr restore`, as the API names it. */
export function restoreTarget(flags: {
  to?: string;
  lsn?: string;
  restorePoint?: string;
}): { target_time: string } | { target_lsn: string } | { target_restore_point: string } {
  const given = [
    ...(flags.to === undefined ? [] : [{ target_time: flags.to }]),
    ...(flags.lsn === undefined ? [] : [{ target_lsn: flags.lsn }]),
    ...(flags.restorePoint === undefined ? [] : [{ target_restore_point: flags.restorePoint }]),
  ];
  const [target] = given;
  if (given.length !== 1 || !target)
    throw new CliError(
      EXIT.usage,
      'NO_TARGET',
      'pass exactly one of --to TIME, --lsn POSITION and --restore-point NAME',
    );
  return target;
}

async function restore(ctx: CliContext): Promise<void> {
  const flags = ctx.options as {
    to?: string;
    lsn?: string;
    restorePoint?: string;
    into?: string;
    wait?: boolean;
    dryRun?: boolean;
  };
  const target = restoreTarget(flags);
  const { client, path } = await databaseScope(ctx);
  const created = await unwrap(
    restorePitr({
      client,
      path,
      ...(flags.dryRun ? { query: { dry_run: true } } : {}),
      body: { ...target, ...(flags.into ? { target_database: flags.into } : {}) },
    }),
  );
  await followRestore(ctx, created, {
    wait: flags.wait,
    hint: 'Follow it with `pgcloud pitr restores`, or restore with --wait.',
    read: (restore_id) => unwrap(getPitrRestore({ client, path: { ...path, restore_id } })),
  });
}

function showReceiver(receiver: WalReceiverStatus): string {
  return renderFields([
    ['receiver', receiver.status],
    ['started', receiver.started_at],
    ['last wal file', receiver.last_wal_file],
    ['received', formatBytes(receiver.bytes_received)],
    ['errors', receiver.errors],
    ['lag', `${receiver.lag_seconds}s`],
  ]);
}

function days(count: number): string {
  return count === 1 ? '1 day' : `${count} days`;
}
