import type { RestoreKind } from '@pgcloud/contracts';

/** How many of the newest completed restores an estimate learns from. */
export const ESTIMATE_HISTORY = 20;

/** A completed restore, as an estimate learns from it. */
export interface PastRestore {
  kind: RestoreKind;
  bytesTotal: number;
  walFilesApplied: number | null;
  downloadSeconds: number;
  replaySeconds: number;
  totalSeconds: number;
}

/** A completed restore's record, as far as an estimate reads it. */
export interface RestoreRecordTimes {
  kind: RestoreKind;
  bytesTotal: number;
  walFilesApplied: number | null;
  downloadSeconds: number | null;
  replaySeconds: number | null;
  startedAt: Date;
  completedAt: Date | null;
}

/** What an estimate learns from a completed restore's record. */
export function pastRestore(record: RestoreRecordTimes): PastRestore {
  return {
    kind: record.kind,
    bytesTotal: record.bytesTotal,
    walFilesApplied: record.walFilesApplied,
    downloadSeconds: record.downloadSeconds ?? 0,
    replaySeconds: record.replaySeconds ?? 0,
    totalSeconds:
      ((record.completedAt ?? record.startedAt).getTime() - record.startedAt.getTime()) / 1000,
  };
}

/** What a planned restore has to do. */
export interface PlannedWork {
  kind: RestoreKind;
  bytes: number;
  walFiles: number;
}

/**
 * Until this deployment has restored anything (or anything of a kind), an estimate
 * starts from these: a download of 50 MiB/s, 4 WAL segments replayed per second, 3 s for
 * a backup's own recovery, and 10 s for the rest (making the server, the check, the swap).
 */
export const FIRST_GUESS = {
  bytesPerSecond: 50 * 1024 * 1024,
  segmentsPerSecond: 4,
  backupRecoverySeconds: 3,
  otherSeconds: 10,
} as const;

/**
 * Seconds a restore would take at the rates this deployment's recent restores measured
 * (docs/api/restores.md#plan): its bytes at their download rate, its WAL segments at
 * their replay rate (a backup restore: their recovery's median time), and the median time
 * of everything else a restore does.
 */
export function estimateSeconds(history: readonly PastRestore[], work: PlannedWork): number {
  const downloads = history.filter((r) => r.bytesTotal > 0 && r.downloadSeconds > 0);
  const bytesPerSecond =
    rate(
      downloads.map((r) => r.bytesTotal),
      downloads.map((r) => r.downloadSeconds),
    ) ?? FIRST_GUESS.bytesPerSecond;
  let replay: number;
  if (work.kind === 'pitr') {
    const replays = history.filter(
      (r) => r.kind === 'pitr' && (r.walFilesApplied ?? 0) > 0 && r.replaySeconds > 0,
    );
    const segmentsPerSecond =
      rate(
        replays.map((r) => r.walFilesApplied ?? 0),
        replays.map((r) => r.replaySeconds),
      ) ?? FIRST_GUESS.segmentsPerSecond;
    replay = work.walFiles / segmentsPerSecond;
  } else {
    replay =
      median(history.filter((r) => r.kind === 'backup').map((r) => r.replaySeconds)) ??
      FIRST_GUESS.backupRecoverySeconds;
  }
  const other =
    median(history.map((r) => Math.max(0, r.totalSeconds - r.downloadSeconds - r.replaySeconds))) ??
    FIRST_GUESS.otherSeconds;
  return Math.ceil(work.bytes / bytesPerSecond + replay + other);
}

/** The sum of `amounts` over the sum of `seconds`; undefined without any. */
function rate(amounts: number[], seconds: number[]): number | undefined {
  const time = seconds.reduce((a, b) => a + b, 0);
  const amount = amounts.reduce((a, b) => a + b, 0);
  return time > 0 && amount > 0 ? amount / time : undefined;
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[middle]
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}
