// What bench:restore prints: for each size, every sample of each target with its phases or
// steps beneath and the ratios of the medians; then, across the sizes, each target's median
// at every size with its seconds per GB from one size to the next, and the ratios by size.
import type { Samples, TimedRestore } from '@pgcloud/bench-support';
import {
  formatBySize,
  formatRatioOfMedians,
  formatSamples,
  mediansBySize,
  phaseRows,
  ratiosBySize,
  withParts,
} from '@pgcloud/bench-support';
import type { HandSteps } from './by-hand.js';
import type { Timed } from './pgcloud.js';
import type { Unavailable } from './write-probe.js';

/** Everything one size measured. */
export interface SizeRun {
  /** The data directory as `du -sb` counted it once grown, in MB. */
  dataMb: number;
  rows: number;
  /** The database's own files (pg_database_size), in MB. */
  databaseMb: number;
  /** pgcloud's backup (zstd), in MB. */
  archiveMb: number;
  intoNew: Timed[];
  inPlace: (Timed & { unavailable: Unavailable })[];
  byHand: HandSteps[];
  backRest: TimedRestore[];
}

export const DESCRIPTION = [
  '  pgcloud, into a new database: completed_at - started_at of POST .../backups/{id}/restore {target_database} (the new server made beside the download + SHA-256 and extraction, recovery, promotion, TLS checks, swap); the database deleted after each sample',
  '  pgcloud, in place: completed_at - started_at of the same with no body (the live server held read-only, the restored data built and checked beside it, swapped in and opened)',
  '  in place, client without a write / a read: the longest stretch an app session (TLS, the database user, reconnecting after errors) trying an INSERT every 100 ms went from its last committed write before a failure to the next one; reads likewise (a SELECT when the INSERT is refused as read-only)',
  '  phases of both: pgcloud_restore_phase_duration_seconds of database-provisioner (kind=backup, target=target_database or in_place)',
  '  by hand: the archive downloaded through its link (https, trusting the S3 certificate; SHA-256 as it streams) into a file, tar --zstd -x of it, then pg_ctl start until it accepts connections',
  '  pgBackRest: `pgbackrest restore --type=immediate --target-action=promote` of a full backup (zstd, process-max = cores, files bundled: repo1-bundle=y) from its repository on the same S3 (HTTPS) into a fresh directory, then pg_ctl start until recovery (archive-get) has ended, it is promoted and a write commits',
];

/** Each target's samples, as one size measured them. */
function targets(run: SizeRun) {
  const intoNew: Samples = {
    label: 'pgcloud, into a new database',
    values: run.intoNew.map((t) => t.seconds),
  };
  const inPlace: Samples = {
    label: 'pgcloud, in place',
    values: run.inPlace.map((t) => t.seconds),
  };
  const noWrite: Samples = {
    label: 'in place, client without a write',
    values: run.inPlace.map((t) => t.unavailable.writeSeconds),
  };
  const noRead: Samples = {
    label: 'in place, client without a read',
    values: run.inPlace.map((t) => t.unavailable.readSeconds),
  };
  const hand: Samples = {
    label: 'by hand',
    values: run.byHand.map((h) => h.download + h.extraction + h.start),
  };
  const local: Samples = {
    label: 'by hand from a local file',
    values: run.byHand.map((h) => h.extraction + h.start),
  };
  const backRest: Samples = { label: 'pgBackRest', values: run.backRest.map((b) => b.seconds) };
  return { intoNew, inPlace, noWrite, noRead, hand, local, backRest };
}

/** One size's table of samples and its ratios. */
export function sizeReport(run: SizeRun, title: string): string[] {
  const t = targets(run);
  const phasesOf = (timed: Timed[]) =>
    phaseRows(
      timed.map((s) => s.phases),
      timed.map((s) => s.seconds),
    );
  const steps = [
    { label: 'download', values: run.byHand.map((h) => h.download) },
    { label: 'extraction', values: run.byHand.map((h) => h.extraction) },
    { label: 'start (crash recovery)', values: run.byHand.map((h) => h.start) },
  ];
  const backRestSteps = [
    { label: 'pgbackrest restore', values: run.backRest.map((b) => b.restoreSeconds) },
    { label: 'start to promoted, a write', values: run.backRest.map((b) => b.startSeconds) },
  ];
  return [
    title,
    '',
    ...formatSamples([
      ...withParts(t.intoNew, phasesOf(run.intoNew)),
      ...withParts(t.inPlace, phasesOf(run.inPlace)),
      t.noWrite,
      t.noRead,
      ...withParts(t.hand, steps),
      ...withParts(t.backRest, backRestSteps),
    ]),
    `  failed tries of the client during each in-place restore: ${run.inPlace.map((s) => s.unavailable.failedTries).join(', ')}`,
    '',
    formatRatioOfMedians(t.intoNew, t.backRest),
    formatRatioOfMedians(t.inPlace, t.backRest),
    formatRatioOfMedians(t.intoNew, t.hand),
    formatRatioOfMedians(t.inPlace, t.hand, 1.3),
    formatRatioOfMedians(t.inPlace, t.local, 1.3),
  ];
}

/** Across the sizes: the medians, their growth per GB, and the ratios by size. */
export function growthReport(runs: readonly SizeRun[]): string[] {
  const sizesMb = runs.map((r) => r.dataMb);
  const all = runs.map(targets);
  const bySize = (pick: (t: ReturnType<typeof targets>) => Samples) => all.map(pick);
  return [
    'medians by size of the data directory, seconds, and their growth in seconds per GB from one size to the next',
    '',
    ...formatBySize(
      sizesMb,
      [
        bySize((t) => t.intoNew),
        bySize((t) => t.inPlace),
        bySize((t) => t.noWrite),
        bySize((t) => t.hand),
        bySize((t) => t.backRest),
      ].map(mediansBySize),
    ),
    '',
    'ratios of the medians by size',
    '',
    ...formatBySize(
      sizesMb,
      [
        ratiosBySize(
          'pgcloud into a new database / pgBackRest',
          bySize((t) => t.intoNew),
          bySize((t) => t.backRest),
        ),
        ratiosBySize(
          'pgcloud in place / pgBackRest',
          bySize((t) => t.inPlace),
          bySize((t) => t.backRest),
        ),
        ratiosBySize(
          'pgcloud into a new database / by hand',
          bySize((t) => t.intoNew),
          bySize((t) => t.hand),
        ),
        ratiosBySize(
          'pgcloud in place / by hand',
          bySize((t) => t.inPlace),
          bySize((t) => t.hand),
        ),
      ],
      { growth: false },
    ),
  ];
}
