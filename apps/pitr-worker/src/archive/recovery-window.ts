import type { ArchiveBackup, RecoveryWindow } from '@pgcloud/contracts';
import { parseLsn } from '@pgcloud/postgres';

/** A completed backup the archive can replay from. */
export interface BaseBackup {
  id: string;
  startLsn: bigint;
  /** Where replay of it becomes consistent: no target before it can be reached from it. */
  endLsn: bigint | null;
  completedAt: Date;
  sizeBytes: number;
}

/** Where the current archive begins: its timeline, first WAL position and time. */
export interface ArchiveStart {
  timeline: number;
  startLsn: bigint;
  /** Backups made before belong to an earlier archive, even on a timeline number reused. */
  startedAt: Date;
}

/**
 * The backups the archive can restore from: completed, on its timeline, and made after
 * the archive began (its WAL from their start on is archived), oldest first.
 */
export function baseBackupsOf(
  backups: readonly ArchiveBackup[],
  archive: ArchiveStart,
): BaseBackup[] {
  return backups
    .flatMap((b) =>
      b.status === 'completed' &&
      b.start_lsn !== null &&
      b.completed_at !== null &&
      b.timeline === archive.timeline &&
      Date.parse(b.created_at) >= archive.startedAt.getTime() &&
      parseLsn(b.start_lsn) >= archive.startLsn
        ? [
            {
              id: b.id,
              startLsn: parseLsn(b.start_lsn),
              endLsn: b.end_lsn === null ? null : parseLsn(b.end_lsn),
              completedAt: new Date(b.completed_at),
              sizeBytes: b.size_bytes,
            },
          ]
        : [],
    )
    .sort((a, b) => a.completedAt.getTime() - b.completedAt.getTime());
}

/**
 * The base backup the window starts from: the newest one completed at or before `cutoff`
 * (now - retention), so the window reaches back the whole retention; while PITR is
 * younger than that, the oldest one. Undefined while there is none.
 */
export function windowBase(bases: readonly BaseBackup[], cutoff: Date): BaseBackup | undefined {
  const old = bases.filter((b) => b.completedAt.getTime() <= cutoff.getTime());
  return old.at(-1) ?? bases[0];
}

/**
 * The recovery window (docs/api/pitr.md#the-recovery-window): from the end of the base backup to `to`,
 * the newest time the archive covers. Empty (all null) until both exist and meet.
 */
export function recoveryWindow(
  base: BaseBackup | undefined,
  to: Date | null,
  latestWalTime: Date | null,
): RecoveryWindow {
  if (!base || !to || to.getTime() < base.completedAt.getTime())
    return { from: null, to: null, base_backup_time: null, latest_wal_time: null };
  return {
    from: base.completedAt.toISOString(),
    to: to.toISOString(),
    base_backup_time: base.completedAt.toISOString(),
    latest_wal_time: (latestWalTime ?? base.completedAt).toISOString(),
  };
}

/** The newest sample time whose WAL position the archive reaches; undefined if none does. */
export function coveredUntil(
  samples: readonly { at: Date; lsn: bigint }[],
  archivedLsn: bigint,
): Date | undefined {
  let covered: Date | undefined;
  for (const sample of samples)
    if (sample.lsn <= archivedLsn && (!covered || sample.at > covered)) covered = sample.at;
  return covered;
}
