import type { Restore, RestoreDryRun } from '@pgcloud/api-client';
import { isDryRun } from '@pgcloud/api-client';
import type { CliContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { renderFields } from './output.js';
import type { ProgressState } from './progress.js';
import { Progress, formatBytes, pollUntil } from './progress.js';

/**
 * A restore's phase and progress (docs/api/restores.md#a-restore), read when present: an
 * older gateway leaves them out. `cancelled` may come among the statuses too.
 */
type RestoreExtras = Partial<Pick<Restore, 'phase' | 'progress'>>;

const TERMINAL = new Set<string>(['completed', 'failed', 'cancelled']);

/** Whether a restore has ended: completed, failed or cancelled. */
export function restoreEnded(restore: Restore): boolean {
  return TERMINAL.has(restore.status);
}

/** The progress line of a restore: its phase (else status), and bytes and ETA when known. */
export function restoreProgress(restore: Restore): ProgressState {
  const { phase, progress } = restore as RestoreExtras;
  const status: string = restore.status;
  const state: ProgressState = {
    phase: phase && phase !== status ? `${status} (${phase})` : status,
  };
  if (progress?.bytes_done !== undefined) state.bytesDone = progress.bytes_done;
  if (progress?.bytes_total) state.bytesTotal = progress.bytes_total;
  if (typeof progress?.eta_seconds === 'number') state.etaSeconds = progress.eta_seconds;
  return state;
}

/**
 * `--wait` of `restore` and `pitr restore`: reads the restore until it ends, showing its
 * progress, and prints the final state as GET answers it. One that did not complete
 * exits 1 with its reason (and with `--json` its final state still on stdout).
 */
export async function waitForRestore(
  ctx: CliContext,
  read: () => Promise<Restore>,
  label: string,
): Promise<void> {
  const final = await pollUntil({
    read,
    done: restoreEnded,
    state: restoreProgress,
    progress: new Progress(ctx.out, label),
  });
  if (final.status !== 'completed') {
    if (ctx.out.mode.json) ctx.out.result(final, () => '');
    throw new CliError(
      EXIT.error,
      final.status === 'failed' ? 'RESTORE_FAILED' : 'RESTORE_CANCELLED',
      `${label} ${final.status}: ${final.error ?? 'the API gave no reason'}`,
    );
  }
  ctx.out.result(
    final,
    () => showRestore(final),
    () => final.id,
  );
}

/** A restore as `label: value` lines. */
export function showRestore(restore: Restore): string {
  return renderFields([
    ['id', restore.id],
    ['kind', restore.kind],
    ['status', restore.status],
    ...(restore.error ? [['error', restore.error] as [string, unknown]] : []),
    ...(restore.backup_id ? [['backup', restore.backup_id] as [string, unknown]] : []),
    ...(restore.target_time ? [['target time', restore.target_time] as [string, unknown]] : []),
    ['into', restore.target_database ?? '(in place)'],
    ...(restore.wal_files_applied !== undefined
      ? [['wal files applied', restore.wal_files_applied] as [string, unknown]]
      : []),
    ['started', restore.started_at],
    ['completed', restore.completed_at],
  ]);
}

/**
 * What `restore` and `pitr restore` do once the API answered: print a plan (`--dry-run`);
 * or print the new restore and `hint`, or with `--wait` read it (through `read`) until it
 * ends.
 */
export async function followRestore(
  ctx: CliContext,
  answer: { restore_id: string } | RestoreDryRun,
  options: { wait?: boolean; hint: string; read: (restoreId: string) => Promise<Restore> },
): Promise<void> {
  if (isDryRun(answer)) {
    const { plan } = answer;
    ctx.out.result(
      answer,
      () =>
        renderFields([
          ['base backup', `${plan.base_backup_id} (${formatBytes(plan.base_backup_size_bytes)})`],
          ['wal files', `${plan.wal_files} (${formatBytes(plan.wal_bytes)})`],
          ['target', plan.target_time ?? plan.target_lsn ?? plan.target_restore_point],
          ['estimated', `${plan.estimated_seconds} s`],
        ]),
      () => String(plan.estimated_seconds),
    );
    ctx.out.note('A dry run: nothing was restored or created.');
    return;
  }
  const created = answer;
  const id = created.restore_id;
  if (!options.wait) {
    ctx.out.result(
      created,
      () => renderFields(Object.entries(created)),
      () => id,
    );
    ctx.out.note(options.hint);
    return;
  }
  await waitForRestore(ctx, () => options.read(id), `restore ${id}`);
}
