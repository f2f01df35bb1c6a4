import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backup, Client } from '@pgcloud/api-client';
import {
  ApiError,
  createBackup,
  createDatabase,
  deleteBackup,
  deleteDatabase,
  getBackup,
  getBackupDownload,
  getDatabase,
  listBackups,
  unwrap,
} from '@pgcloud/api-client';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { runs, withCommonOptions } from '../context.js';
import { downloadVerified } from '../download.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { LocalDaemonClient } from '../local-daemon-client.js';
import { DEFAULT_DAEMON_URL } from '../local-daemon-client.js';
import { Progress, formatBytes, pollUntil } from '../progress.js';

/**
 * How long the temporary cloud database of `--at` may live if the CLI cannot delete it:
 * long enough for the restore, the backup and the download of a large database to end
 * before it expires under them.
 */
const TEMPORARY_LIFETIME_MS = 6 * 3600_000;

/** The flags of `local pull`. */
export interface PullFlags {
  backup?: string;
  at?: string;
  latest?: boolean;
  as?: string;
}

/** Where the cloud data comes from: a backup of the database, or a point of its past. */
export type PullSource =
  { kind: 'latest' } | { kind: 'backup'; id: string } | { kind: 'at'; time: string };

/** `local pull --db NAME [--backup ID | --at TIME | --latest] [--as LOCAL]`, under `local`. */
export function registerPullCommand(
  local: Command,
  daemon: (ctx: CliContext) => LocalDaemonClient,
): void {
  withCommonOptions(
    local
      .command('pull')
      .description('Make a local database holding a cloud database’s data, from a backup')
      .option('--backup <backup-id>', 'from this completed backup')
      .option('--at <time>', 'as of this time (ISO 8601 with its zone): needs PITR')
      .option('--latest', 'from the newest completed backup (the default)')
      .option('--as <name>', 'the local database’s name (default: the cloud database’s)')
      .option(
        '--daemon-url <url>',
        `the local daemon (default: PGCLOUD_DAEMON_URL, then ${DEFAULT_DAEMON_URL})`,
      ),
    'database',
  ).action(runs((ctx) => pull(ctx, daemon(ctx))));
}

/** At most one of --backup, --at and --latest; none means the newest backup. */
export function pullSource(flags: PullFlags): PullSource {
  const given = [flags.backup, flags.at, flags.latest].filter((flag) => flag !== undefined);
  if (given.length > 1)
    throw new CliError(EXIT.usage, 'ONE_SOURCE', 'give at most one of --backup, --at and --latest');
  if (flags.backup !== undefined) return { kind: 'backup', id: flags.backup };
  if (flags.at !== undefined) return { kind: 'at', time: flags.at };
  return { kind: 'latest' };
}

/**
 * Asks the cloud for a backup (for `--at`, of a branch at that time, made for the pull and
 * deleted after it), downloads it into a folder of its own with the checksum checked, and
 * hands it to the daemon, which restores it (docs/api/local-daemon.md#pulling-a-cloud-database-down). The download is
 * removed whatever happens.
 */
async function pull(ctx: CliContext, daemon: LocalDaemonClient): Promise<void> {
  const flags = ctx.options as PullFlags;
  const source = pullSource(flags);
  const localName = flags.as ?? ctx.database;
  await assertLocalNameFree(daemon, localName);
  const client = ctx.api();
  const cloud = { project_id: await ctx.projectId(), name: ctx.database };
  const folder = await mkdtemp(join(tmpdir(), 'pgcloud-pull-'));
  let branch: { project_id: string; name: string; backup_id?: string } | undefined;
  try {
    let backup: Backup;
    if (source.kind === 'at') {
      branch = { project_id: cloud.project_id, name: branchName(cloud.name) };
      backup = await backupOfBranch(ctx, client, cloud.name, branch, source.time);
    } else backup = await chosenBackup(client, cloud, source);
    const path = join(folder, `${cloud.name}-${backup.id}.tar.zst`);
    const link = await unwrap(
      getBackupDownload({
        client,
        path: { ...(branch ?? cloud), backup_id: backup.id },
      }),
    );
    const bytes = await downloadVerified({
      url: link.download_url,
      target: path,
      sha256: backup.checksum_sha256 ?? '',
      sizeBytes: backup.size_bytes,
      progress: new Progress(ctx.out, `backup ${backup.id}`),
    });
    ctx.out.note(`Downloaded ${formatBytes(bytes)}; restoring it into the local server...`);
    const detail = await daemon.create({
      name: localName,
      fromArchive: { path, checksumSha256: backup.checksum_sha256 ?? '' },
    });
    ctx.out.result(
      detail,
      () =>
        `Local database ${detail.name} holds ${cloud.name} as of backup ${backup.id}` +
        `${source.kind === 'at' ? ` (at ${source.time})` : ''}: ${detail.tables} tables, ` +
        `${formatBytes(detail.size)}. Connect: pgcloud local get ${detail.name}`,
      () => detail.name,
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
    if (branch) await removeBranch(ctx, client, branch);
  }
}

async function assertLocalNameFree(daemon: LocalDaemonClient, name: string): Promise<void> {
  const found = await daemon.get(name).then(
    () => true,
    (error: unknown) => {
      if (error instanceof ApiError && error.code === 'DATABASE_NOT_FOUND') return false;
      throw error;
    },
  );
  if (found)
    throw new CliError(
      EXIT.conflict,
      'DATABASE_NAME_TAKEN',
      `there is a local database '${name}' already: choose another name with --as`,
    );
}

/** The backup --backup names, or the newest completed one; it must be completed. */
async function chosenBackup(
  client: Client,
  path: { project_id: string; name: string },
  source: PullSource,
): Promise<Backup> {
  if (source.kind === 'backup') {
    const backup = await unwrap(getBackup({ client, path: { ...path, backup_id: source.id } }));
    if (backup.status !== 'completed')
      throw new CliError(
        EXIT.conflict,
        'BACKUP_NOT_READY',
        `backup ${backup.id} is ${backup.status}: only a completed backup can be pulled`,
      );
    return backup;
  }
  const { backups } = await unwrap(listBackups({ client, path }));
  const newest = backups.find((backup) => backup.status === 'completed');
  if (!newest)
    throw new CliError(
      EXIT.notFound,
      'NO_BACKUP',
      `${path.name} has no completed backup: take one with \`pgcloud backups create --db ` +
        `${path.name} --wait\`, or pull --at a time of its PITR window`,
    );
  return newest;
}

/**
 * `--at`: a branch of the database at that time (a PITR restore into a new database that
 * expires within six hours should the CLI die), then a backup of it.
 */
async function backupOfBranch(
  ctx: CliContext,
  client: Client,
  source: string,
  branch: { project_id: string; name: string; backup_id?: string },
  time: string,
): Promise<Backup> {
  const { project_id, name } = branch;
  await unwrap(
    createDatabase({
      client,
      path: { project_id },
      body: {
        name,
        from: { database: source, target_time: time },
        expires_at: new Date(Date.now() + TEMPORARY_LIFETIME_MS).toISOString(),
      },
    }),
  );
  const database = await pollUntil({
    read: () => unwrap(getDatabase({ client, path: { project_id, name } })),
    done: (found) => found.status === 'running' || found.status === 'failed',
    state: (found) => ({ phase: `restoring to ${time}: ${found.status}` }),
    progress: new Progress(ctx.out, `branch ${name}`),
  });
  if (database.status === 'failed')
    throw new CliError(
      EXIT.error,
      'RESTORE_FAILED',
      `the restore to ${time} failed: ${database.error ?? 'the API gave no reason'}`,
    );
  const created = await unwrap(createBackup({ client, path: { project_id, name } }));
  branch.backup_id = created.id;
  const backup = await pollUntil({
    read: () => unwrap(getBackup({ client, path: { project_id, name, backup_id: created.id } })),
    done: (found) => found.status === 'completed' || found.status === 'failed',
    state: (found) => ({ phase: `backing up: ${found.status}` }),
    progress: new Progress(ctx.out, `backup ${created.id}`),
  });
  if (backup.status === 'failed')
    throw new CliError(
      EXIT.error,
      'BACKUP_FAILED',
      `the backup at ${time} failed: ${backup.error ?? 'the API gave no reason'}`,
    );
  return backup;
}

/** Deletes the temporary branch and its backup; what cannot be deleted is said. */
async function removeBranch(
  ctx: CliContext,
  client: Client,
  branch: { project_id: string; name: string; backup_id?: string },
): Promise<void> {
  const { project_id, name, backup_id } = branch;
  const gone = (error: unknown) => error instanceof ApiError && error.status === 404;
  try {
    if (backup_id)
      await unwrap(deleteBackup({ client, path: { project_id, name, backup_id } })).catch(
        (error: unknown) => {
          if (!gone(error)) throw error;
        },
      );
    await unwrap(deleteDatabase({ client, path: { project_id, name } })).catch((error: unknown) => {
      if (!gone(error)) throw error;
    });
  } catch (error) {
    ctx.out.note(
      `Could not delete the temporary cloud database ${name} (${(error as Error).message}); ` +
        'it expires within six hours, or delete it with `pgcloud db delete`.',
    );
  }
}

/** `<source>-pull-<6 hex>`, within the 63 characters a name may have. */
export function branchName(source: string): string {
  return `${source.slice(0, 50)}-pull-${randomBytes(3).toString('hex')}`;
}
