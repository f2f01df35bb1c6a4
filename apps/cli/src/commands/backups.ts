import { resolve } from 'node:path';
import type { Backup } from '@pgcloud/api-client';
import {
  cancelRestore,
  createBackup,
  deleteBackup,
  getBackup,
  getBackupDownload,
  getRestore,
  listBackups,
  restoreBackup,
  unwrap,
} from '@pgcloud/api-client';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import { downloadVerified, refuseExisting } from '../download.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderFields, renderTable } from '../output.js';
import { Progress, formatBytes, pollUntil } from '../progress.js';
import { databaseScope } from '../database-scope.js';
import { followRestore, showRestore } from '../restore-progress.js';

/**
 * `backups list|create|get|download|delete`, `restore` and `cancel-restore`, each on one
 * database.
 */
export function registerBackupCommands(program: Command): void {
  const backups = program
    .command('backups')
    .description('List, take, show, download and delete backups of a database');

  withCommonOptions(
    backups.command('list').description('List the backups of the database, newest first'),
    'database',
  ).action(runs(list));

  withCommonOptions(
    backups
      .command('create')
      .description('Take a manual backup of the database')
      .option('--wait', 'wait until it is completed (or failed), showing progress on stderr'),
    'database',
  ).action(runs(create));

  withCommonOptions(
    backups.command('get').description('Show a backup').argument('<backup-id>', 'the backup'),
    'database',
  ).action(
    runs(async (ctx, backup_id: string) => {
      const { client, path } = await databaseScope(ctx);
      const backup = await unwrap(getBackup({ client, path: { ...path, backup_id } }));
      ctx.out.result(
        backup,
        () => showBackup(backup),
        () => backup.id,
      );
    }),
  );

  withCommonOptions(
    backups
      .command('download')
      .description("Download a completed backup, verifying its checksum (a zstd'd tar)")
      .argument('<backup-id>', 'the backup (it must be completed)')
      .option('-o, --output <file>', 'the file to write (default: <database>-<backup-id>.tar.zst)')
      .option('--force', 'replace the file if it exists'),
    'database',
  ).action(runs(download));

  withCommonOptions(
    backups
      .command('delete')
      .description('Delete a backup and its archive')
      .argument('<backup-id>', 'the backup'),
    'database',
  ).action(
    runs(async (ctx, backup_id: string) => {
      const { client, path } = await databaseScope(ctx);
      const deleted = await unwrap(deleteBackup({ client, path: { ...path, backup_id } }));
      ctx.out.result(
        deleted,
        () => `Deleted backup ${backup_id}.`,
        () => deleted.id,
      );
    }),
  );

  withCommonOptions(
    program
      .command('restore')
      .description(
        'Restore a backup, in place (the database is read-only meanwhile) or --into a new database',
      )
      .argument('<backup-id>', 'the backup (it must be completed)')
      .option(
        '--into <name>',
        'restore into this new database of the project, leaving the source as it is',
      )
      .option('--wait', 'wait until it is completed (or failed), showing progress on stderr')
      .option('--dry-run', 'show the plan and an estimate after every check; restore nothing'),
    'database',
  ).action(runs(restore));

  withCommonOptions(
    program
      .command('cancel-restore')
      .description(
        'Stop a restore (of a backup or PITR) before it swaps; the source stays as it was',
      )
      .argument('<restore-id>', 'the restore (`pgcloud db get`, `pitr restores`)'),
    'database',
  ).action(
    runs(async (ctx, restore_id: string) => {
      const { client, path } = await databaseScope(ctx);
      const restore = await unwrap(cancelRestore({ client, path: { ...path, restore_id } }));
      ctx.out.result(
        restore,
        () => showRestore(restore),
        () => restore.status,
      );
      if (restore.status !== 'cancelled')
        ctx.out.note(
          'Still stopping; `pgcloud pitr restores` or the API shows it end `cancelled`.',
        );
    }),
  );
}

async function list(ctx: CliContext): Promise<void> {
  const { client, path } = await databaseScope(ctx);
  const answer = await unwrap(listBackups({ client, path }));
  ctx.out.result(
    answer,
    () =>
      renderTable(answer.backups, [
        { header: 'id', value: (b) => b.id },
        { header: 'type', value: (b) => b.type },
        { header: 'status', value: (b) => b.status },
        { header: 'size', value: (b) => formatBytes(b.size_bytes) },
        { header: 'created', value: (b) => b.created_at },
        { header: 'expires', value: (b) => b.expires_at },
      ]),
    () => answer.backups.map((b) => b.id).join('\n'),
  );
}

async function create(ctx: CliContext): Promise<void> {
  const { client, path } = await databaseScope(ctx);
  const created = await unwrap(createBackup({ client, path }));
  if (!(ctx.options as { wait?: boolean }).wait) {
    ctx.out.result(
      created,
      () => renderFields(Object.entries(created)),
      () => created.id,
    );
    ctx.out.note(`Follow it with \`pgcloud backups get ${created.id}\`, or create with --wait.`);
    return;
  }
  const backup_id = created.id;
  const final = await pollUntil({
    read: () => unwrap(getBackup({ client, path: { ...path, backup_id } })),
    done: (backup) => backup.status === 'completed' || backup.status === 'failed',
    state: (backup) => ({
      phase: backup.status,
      ...(backup.size_bytes > 0 ? { bytesDone: backup.size_bytes } : {}),
    }),
    progress: new Progress(ctx.out, `backup ${backup_id}`),
  });
  if (final.status === 'failed') {
    if (ctx.out.mode.json) ctx.out.result(final, () => '');
    throw new CliError(
      EXIT.error,
      'BACKUP_FAILED',
      `backup ${backup_id} failed: ${final.error ?? 'the API gave no reason'}`,
    );
  }
  ctx.out.result(
    final,
    () => showBackup(final),
    () => final.id,
  );
}

async function download(ctx: CliContext, backup_id: string): Promise<void> {
  const flags = ctx.options as { output?: string; force?: boolean };
  const target = resolve(flags.output ?? `${ctx.database}-${backup_id}.tar.zst`);
  refuseExisting(target, flags.force);
  const { client, path } = await databaseScope(ctx);
  const backup = await unwrap(getBackup({ client, path: { ...path, backup_id } }));
  const link = await unwrap(getBackupDownload({ client, path: { ...path, backup_id } }));
  if (!backup.checksum_sha256)
    throw new CliError(
      EXIT.error,
      'NO_CHECKSUM',
      `backup ${backup_id} has no checksum_sha256 to verify the download against`,
    );
  const bytes = await downloadVerified({
    url: link.download_url,
    target,
    sha256: backup.checksum_sha256,
    sizeBytes: backup.size_bytes,
    force: flags.force,
    progress: new Progress(ctx.out, `backup ${backup_id}`),
  });
  const done = `Wrote ${target} (${formatBytes(bytes)}, SHA-256 verified).`;
  ctx.out.result(
    backup,
    () => done,
    () => target,
  );
  if (ctx.out.mode.json) ctx.out.note(done);
}

async function restore(ctx: CliContext, backup_id: string): Promise<void> {
  const flags = ctx.options as { into?: string; wait?: boolean; dryRun?: boolean };
  const { client, path } = await databaseScope(ctx);
  const created = await unwrap(
    restoreBackup({
      client,
      path: { ...path, backup_id },
      ...(flags.dryRun ? { query: { dry_run: true } } : {}),
      body: flags.into ? { target_database: flags.into } : {},
    }),
  );
  await followRestore(ctx, created, {
    wait: flags.wait,
    hint: `\`pgcloud db get ${flags.into ?? ctx.database}\` shows it restoring until it ends; or restore with --wait.`,
    read: (restore_id) => unwrap(getRestore({ client, path: { ...path, restore_id } })),
  });
}

function showBackup(backup: Backup): string {
  return renderFields([
    ['id', backup.id],
    ['type', backup.type],
    ['status', backup.status],
    ...(backup.error ? [['error', backup.error] as [string, unknown]] : []),
    ['size', formatBytes(backup.size_bytes)],
    ['sha256', backup.checksum_sha256],
    ['lsn', backup.start_lsn && `${backup.start_lsn} - ${backup.end_lsn ?? '?'}`],
    ['created', backup.created_at],
    ['completed', backup.completed_at],
    ...(backup.expires_at ? [['expires', backup.expires_at] as [string, unknown]] : []),
  ]);
}
