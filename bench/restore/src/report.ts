// What bench:restore prints: for each size, every sample of each target with its phases or
// steps beneath and the ratios of the medians; then, across the sizes, each target's median
// at every size with its seconds per GB from one size to the next, and the ratios by size.
import type { MachineCpu, Samples, TimedRestore } from '@pgcloud/bench-support';
import {
  cpuOfPhases,
  cpuOfSteps,
  cpuRows,
  formatBySize,
  formatCpuRows,
  formatRatioOfMedians,
  formatSamples,
  mediansBySize,
  phaseCpuRows,
  phaseRows,
  ratiosBySize,
  stepRows,
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

const HAND_STEPS = ['download', 'extraction', 'start (crash recovery)'];
const BACKREST_STEPS = ['pgbackrest restore', 'start to promoted, a write'];

const handSteps = (h: HandSteps) => [h.download, h.extraction, h.start];
const backRestSteps = (b: TimedRestore) => [b.restoreSeconds, b.startSeconds];

/** The machine's CPU during each target's samples and their steps, rows as `wall`'s. */
function cpuReport(run: SizeRun, wall: Samples[], cpu: MachineCpu): string[] {
  const between = (startMs: number, seconds: number) =>
    cpu.secondsBetween(startMs, startMs + seconds * 1000);
  const ours = (label: string, timed: Timed[]) =>
    withParts(
      { label, values: timed.map((s) => between(s.startedAtMs, s.seconds)) },
      phaseCpuRows(timed.map((s) => cpuOfPhases(cpu, s.startedAtMs, s.phases))),
    );
  const hands = run.byHand.map((h) => cpuOfSteps(cpu, h.startedAtMs, handSteps(h)));
  const theirs = run.backRest.map((b) => cpuOfSteps(cpu, b.startedAtMs, backRestSteps(b)));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return formatCpuRows(
    cpuRows(wall, [
      ...ours('pgcloud, into a new database', run.intoNew),
      ...ours('pgcloud, in place', run.inPlace),
      ...withParts({ label: 'by hand', values: hands.map(sum) }, stepRows(HAND_STEPS, hands)),
      ...withParts(
        { label: 'pgBackRest', values: theirs.map(sum) },
        stepRows(BACKREST_STEPS, theirs),
      ),
    ]),
  );
}

/** One size's table of samples, the machine's CPU meanwhile, and the ratios. */
export function sizeReport(run: SizeRun, title: string, cpu: MachineCpu): string[] {
  const t = targets(run);
  const phasesOf = (timed: Timed[]) =>
    phaseRows(
      timed.map((s) => s.phases),
      timed.map((s) => s.seconds),
    );
  const steps = stepRows(HAND_STEPS, run.byHand.map(handSteps));
  const backRest = stepRows(BACKREST_STEPS, run.backRest.map(backRestSteps));
  // Outside the phases has no CPU row: where in the restore it falls is not known.
  const inPhases = (timed: Timed[]) => phasesOf(timed).slice(0, -1);
  return [
    title,
    '',
    ...formatSamples([
      ...withParts(t.intoNew, phasesOf(run.intoNew)),
      ...withParts(t.inPlace, phasesOf(run.inPlace)),
      t.noWrite,
      t.noRead,
      ...withParts(t.hand, steps),
      ...withParts(t.backRest, backRest),
    ]),
    `  failed tries of the client during each in-place restore: ${run.inPlace.map((s) => s.unavailable.failedTries).join(', ')}`,
    '',
    ...cpuReport(
      run,
      [
        ...withParts(t.intoNew, inPhases(run.intoNew)),
        ...withParts(t.inPlace, inPhases(run.inPlace)),
        ...withParts(t.hand, steps),
        ...withParts(t.backRest, backRest),
      ],
      cpu,
    ),
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
