// What bench:pitr prints: for each size, every sample of each way with its phases or steps
// beneath and the ratios of the medians; then, across the sizes, each way's median at every
// size with its seconds per GB from one size to the next, and the ratios by size.
import type { MachineCpu, PhaseSeconds, Samples, TimedRestore } from '@pgcloud/bench-support';
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
import type { HandRestore } from './by-hand.js';
import type { OurRestore } from './pgcloud.js';
import type { Target } from './target.js';

/** One pgcloud restore: its record's figures, and its phases as the provisioner timed them. */
export interface OurSample extends OurRestore {
  phases: PhaseSeconds;
}

/** Everything one size measured. */
export interface SizeRun {
  /** The data directory without pg_wal, as `du -sb` counted it once grown, in MB. */
  dataMb: number;
  rows: number;
  /** The database's own files (pg_database_size), in MB. */
  databaseMb: number;
  /** pgcloud's backup (zstd), in MB. */
  backupMb: number;
  /** The objects of pgcloud's archive that hold the WAL after the backup, in MB. */
  storedWalMb: number;
  target: Target;
  ours: OurSample[];
  byHand: HandRestore[];
  backRest: TimedRestore[];
}

export const DESCRIPTION = [
  "  pgcloud: completed_at - started_at of POST .../pitr/restore {target_time, target_database} (the new database's server made meanwhile, base backup download + SHA-256 and extraction while the first 32 WAL segments are fetched 8 at a time, the rest during replay to the target, at most 16 ahead of it, decompressed by zstd into the spool, promotion, roles, TLS checks, swap); the database deleted after each sample",
  '  phases: pgcloud_restore_phase_duration_seconds of database-provisioner (kind=pitr, target=target_database)',
  '  by hand (downloads included): the same base backup through its link (https, trusting the S3 certificate) while the WAL comes from S3 8 at a time (a compressed segment through zstd -d as it comes), tar --zstd -x, recovery with restore_command cp, promote, until pg_is_in_recovery() is false',
  '  pgBackRest: `pgbackrest restore --type=time --target=<target> --target-action=promote` of its full backup (zstd, process-max = cores, files bundled) from its repository on the same S3 (HTTPS) into a fresh directory, then pg_ctl start until recovery (asynchronous archive-get, a queue of 1 GiB) has reached the target, it is promoted and a write commits',
];

/** Each way's samples, as one size measured them. */
function ways(run: SizeRun) {
  const pgcloud: Samples = { label: 'pgcloud', values: run.ours.map((o) => o.seconds) };
  const hand: Samples = { label: 'by hand', values: run.byHand.map((h) => h.promoted) };
  const backRest: Samples = { label: 'pgBackRest', values: run.backRest.map((b) => b.seconds) };
  return { pgcloud, hand, backRest };
}

const HAND_STEPS = ['downloads', 'extraction', 'recovery and promotion'];
const BACKREST_STEPS = ['pgbackrest restore', 'start to promoted, a write'];

const handSteps = (h: HandRestore) => [
  h.downloaded,
  h.extracted - h.downloaded,
  h.promoted - h.extracted,
];
const backRestSteps = (b: TimedRestore) => [b.restoreSeconds, b.startSeconds];

/** The machine's CPU during each way's samples and their steps, rows as the wall table's. */
function cpuReport(run: SizeRun, wall: Samples[], cpu: MachineCpu): string[] {
  const between = (startMs: number, seconds: number) =>
    cpu.secondsBetween(startMs, startMs + seconds * 1000);
  const hands = run.byHand.map((h) => cpuOfSteps(cpu, h.startedAtMs, handSteps(h)));
  const theirs = run.backRest.map((b) => cpuOfSteps(cpu, b.startedAtMs, backRestSteps(b)));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const used = [
    ...withParts(
      { label: 'pgcloud', values: run.ours.map((o) => between(o.startedAtMs, o.seconds)) },
      phaseCpuRows(run.ours.map((o) => cpuOfPhases(cpu, o.startedAtMs, o.phases))),
    ),
    ...withParts({ label: 'by hand', values: hands.map(sum) }, stepRows(HAND_STEPS, hands)),
    ...withParts(
      { label: 'pgBackRest', values: theirs.map(sum) },
      stepRows(BACKREST_STEPS, theirs),
    ),
  ];
  return formatCpuRows(cpuRows(wall, used));
}

/** One size's table of samples, the machine's CPU meanwhile, and the ratios. */
export function sizeReport(run: SizeRun, title: string, cpu: MachineCpu): string[] {
  const w = ways(run);
  const phases = phaseRows(
    run.ours.map((o) => o.phases),
    w.pgcloud.values,
  );
  const steps = stepRows(HAND_STEPS, run.byHand.map(handSteps));
  const backRest = stepRows(BACKREST_STEPS, run.backRest.map(backRestSteps));
  const each = (values: number[]) => values.join(', ');
  const { target } = run;
  return [
    title,
    `  target ${target.time}; both archives held the marker after it ${target.archivedSeconds.toFixed(1)} s after its segment was switched`,
    '',
    ...formatSamples([
      ...withParts(w.pgcloud, phases),
      ...withParts(w.hand, steps),
      ...withParts(w.backRest, backRest),
    ]),
    '',
    // Outside the phases has no CPU row: where in the restore it falls is not known.
    ...cpuReport(
      run,
      [
        ...withParts(w.pgcloud, phases.slice(0, -1)),
        ...withParts(w.hand, steps),
        ...withParts(w.backRest, backRest),
      ],
      cpu,
    ),
    '',
    formatRatioOfMedians(w.pgcloud, w.backRest, 1.0),
    formatRatioOfMedians(w.pgcloud, w.hand, 1.15),
    `wal_files_applied (pgcloud): ${each(run.ours.map((o) => o.walFilesApplied))}; segments fetched by hand: ${each(run.byHand.map((h) => h.segments))}`,
    `rows restored by every sample of each way: ${target.written.rows} of wal_filler, as written up to the target, and none of after_target`,
  ];
}

/** Across the sizes: the medians, their growth per GB, and the ratios by size. */
export function growthReport(runs: readonly SizeRun[]): string[] {
  const sizesMb = runs.map((r) => r.dataMb);
  const all = runs.map(ways);
  const bySize = (pick: (w: ReturnType<typeof ways>) => Samples) => all.map(pick);
  return [
    'medians by size of the data directory (without pg_wal), seconds, and their growth in seconds per GB from one size to the next',
    '',
    ...formatBySize(
      sizesMb,
      [bySize((w) => w.pgcloud), bySize((w) => w.hand), bySize((w) => w.backRest)].map(
        mediansBySize,
      ),
    ),
    '',
    'ratios of the medians by size',
    '',
    ...formatBySize(
      sizesMb,
      [
        ratiosBySize(
          'pgcloud / pgBackRest',
          bySize((w) => w.pgcloud),
          bySize((w) => w.backRest),
        ),
        ratiosBySize(
          'pgcloud / by hand',
          bySize((w) => w.pgcloud),
          bySize((w) => w.hand),
        ),
      ],
      { growth: false },
    ),
  ];
}
