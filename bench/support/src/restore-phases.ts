// The phases of pgcloud's restores as database-provisioner times them itself, in its
// histogram pgcloud_restore_phase_duration_seconds (labels kind, target, phase), read on
// its management port before and after a restore: the difference of each phase's `_sum`.
import type { Samples } from './bench-samples.js';
import type { MachineCpu } from './machine-cpu.js';
import { histogramSumsBy, scrapeMetrics } from './metrics-text.js';

const PHASE_HISTOGRAM = 'pgcloud_restore_phase_duration_seconds';

// The order a restore runs them in (database-provisioner's RestorePhase); a phase the app
// adds later is listed after these, in the order its metrics name it.
const PHASE_ORDER = [
  'create',
  'hold',
  'plan',
  'pause_archive',
  'download',
  'recover',
  'check',
  'swap',
  'finish',
];

/** Which restores to read: the histogram's labels other than the phase. */
export interface RestoreLabels {
  kind: 'backup' | 'pitr';
  target: 'in_place' | 'target_database';
}

/** Seconds per phase, in the order a restore runs them. */
export type PhaseSeconds = Map<string, number>;

/** Each phase's seconds added between two readings of the histogram's `_sum`s. */
export function phasesBetween(before: PhaseSeconds, after: PhaseSeconds): PhaseSeconds {
  const known = PHASE_ORDER.filter((phase) => after.has(phase));
  const others = [...after.keys()].filter((phase) => !PHASE_ORDER.includes(phase));
  return new Map(
    [...known, ...others].map((phase) => [
      phase,
      (after.get(phase) ?? 0) - (before.get(phase) ?? 0),
    ]),
  );
}

async function readPhases(managementUrl: string, labels: RestoreLabels): Promise<PhaseSeconds> {
  const text = await scrapeMetrics(managementUrl);
  return histogramSumsBy(text, PHASE_HISTOGRAM, 'phase', { ...labels });
}

/**
 * Runs `restore` (one restore of the kind and target `labels` name, and no other meanwhile)
 * and answers its result with the seconds each phase took, as database-provisioner (at
 * `managementUrl`) observed them.
 */
export async function timeRestorePhases<T>(
  managementUrl: string,
  labels: RestoreLabels,
  restore: () => Promise<T>,
): Promise<{ result: T; phases: PhaseSeconds }> {
  const before = await readPhases(managementUrl, labels);
  const result = await restore();
  const after = await readPhases(managementUrl, labels);
  return { result, phases: phasesBetween(before, after) };
}

// Phases that run beside the next ones (a new database's server is made while the plan
// and the download go on): listed, but not part of the time the phases add up to.
const BESIDE: Record<string, string> = { create: 'create (beside plan, download)' };

/**
 * One row per phase across the samples, then what each restore's record (`totals`:
 * completed_at - started_at) took outside the phases that run one after another: the job's
 * queue and lock, records.
 */
export function phaseRows(samples: readonly PhaseSeconds[], totals: readonly number[]): Samples[] {
  const phases = [...new Set(samples.flatMap((s) => [...s.keys()]))];
  const rows = phases.map((phase) => ({
    label: BESIDE[phase] ?? phase,
    values: samples.map((s) => s.get(phase) ?? 0),
  }));
  const outside = samples.map((s, i) => {
    const inPhases = [...s]
      .filter(([phase]) => !(phase in BESIDE))
      .reduce((sum, [, seconds]) => sum + seconds, 0);
    return (totals[i] ?? Number.NaN) - inPhases;
  });
  return [...rows, { label: 'outside the phases', values: outside }];
}

/**
 * The machine's CPU seconds during each phase of a restore that started at `startedAtMs`
 * (its record's started_at): the phases one after another from there, those that run
 * beside the others from there too. The job's queue and records (outside the phases, a few
 * hundredths of a second) shift the boundaries by as much.
 */
export function cpuOfPhases(
  cpu: MachineCpu,
  startedAtMs: number,
  phases: PhaseSeconds,
): PhaseSeconds {
  let at = startedAtMs;
  return new Map(
    [...phases].map(([phase, seconds]) => {
      const from = phase in BESIDE ? startedAtMs : at;
      if (!(phase in BESIDE)) at += seconds * 1000;
      return [phase, cpu.secondsBetween(from, from + seconds * 1000)];
    }),
  );
}

/** The CPU rows that go with phaseRows: one per phase, none for what is outside them. */
export function phaseCpuRows(samples: readonly PhaseSeconds[]): Samples[] {
  const phases = [...new Set(samples.flatMap((s) => [...s.keys()]))];
  return phases.map((phase) => ({
    label: BESIDE[phase] ?? phase,
    values: samples.map((s) => s.get(phase) ?? Number.NaN),
  }));
}
