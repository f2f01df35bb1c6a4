// The machine's CPU over a run, from /proc/stat (Linux): read every 100 ms, so that the CPU
// each step of a restore used (every process's: the apps, the local S3, PostgreSQL, zstd,
// tar, pgBackRest) can be read afterwards between any two moments. Beside a step's wall
// time it says whether the cores were full: a step that keeps them busy is as fast as its
// CPU allows on this machine, one that leaves them idle waits on something else.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Samples } from './bench-samples.js';
import { alignedTable, median } from './bench-samples.js';

/** Linux counts CPU time in /proc/stat in ticks of 1/100 s (USER_HZ) on every architecture. */
const SECONDS_PER_TICK = 0.01;
const INTERVAL_MS = 100;

/**
 * The CPU seconds all cores have been busy so far, from /proc/stat's first line: user,
 * nice, system, irq, softirq and steal (idle and iowait are not busy; guest time is in
 * user already).
 */
export function busySeconds(procStat: string): number {
  const fields = (procStat.split('\n')[0] ?? '').trim().split(/\s+/);
  if (fields[0] !== 'cpu') throw new Error('/proc/stat does not start with the line "cpu"');
  const ticks = [1, 2, 3, 6, 7, 8].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return ticks * SECONDS_PER_TICK;
}

/** The machine's busy CPU seconds, read every 100 ms from start() to stop(). */
export class MachineCpu {
  private readonly at: number[] = [];
  private readonly busy: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly read = () => busySeconds(readFileSync('/proc/stat', 'utf8'))) {}

  start(intervalMs = INTERVAL_MS): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }

  /** Adds a reading now (Date.now()); start() does this every interval. */
  sample(now = Date.now()): void {
    this.at.push(now);
    this.busy.push(this.read());
  }

  /** CPU seconds used between two moments (ms since the epoch), read between readings. */
  secondsBetween(fromMs: number, toMs: number): number {
    return this.busyAt(toMs) - this.busyAt(fromMs);
  }

  private busyAt(ms: number): number {
    const { at, busy } = this;
    if (at.length === 0 || ms < (at[0] ?? 0) || ms > (at[at.length - 1] ?? 0)) return Number.NaN;
    let i = at.findIndex((t) => t >= ms);
    if (at[i] === ms) return busy[i] ?? Number.NaN;
    // Between two readings: as if the CPU was used at an even pace between them.
    i = Math.max(1, i);
    const [t0, t1, b0, b1] = [at[i - 1] ?? 0, at[i] ?? 0, busy[i - 1] ?? 0, busy[i] ?? 0];
    return b0 + ((b1 - b0) * (ms - t0)) / (t1 - t0);
  }
}

/** The CPU seconds of steps that ran one after another from `startMs`, each `seconds` long. */
export function cpuOfSteps(cpu: MachineCpu, startMs: number, seconds: readonly number[]): number[] {
  let at = startMs;
  return seconds.map((s) => {
    const from = at;
    at += s * 1000;
    return cpu.secondsBetween(from, at);
  });
}

/** A row of the CPU table: a figure's wall seconds and the machine's CPU seconds meanwhile. */
export interface CpuRow {
  label: string;
  wall: readonly number[];
  cpu: readonly number[];
}

/**
 * The rows of figures with parts, paired: each wall row with its CPU row of the same order,
 * which must carry the same label (a row missing from one list would shift the others).
 */
export function cpuRows(wall: readonly Samples[], cpu: readonly Samples[]): CpuRow[] {
  return wall.map((row, i) => {
    if (cpu[i]?.label !== row.label)
      throw new Error(`CPU row ${i} is "${cpu[i]?.label}", not "${row.label}"`);
    return { label: row.label, wall: row.values, cpu: cpu[i].values };
  });
}

/**
 * A table of medians: each row's wall seconds, the machine's CPU seconds meanwhile, and how
 * many of the cores that kept busy (the median of CPU / wall over the samples).
 */
export function formatCpuRows(rows: readonly CpuRow[], cores = availableParallelism()): string[] {
  const cells = rows.map(({ label, wall, cpu }) => {
    const busy = wall
      .map((w, i) => (w > 0 ? (cpu[i] ?? Number.NaN) / w : Number.NaN))
      .filter(Number.isFinite);
    const show = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '-');
    return [label, show(median(wall)), show(median(cpu)), show(median(busy))];
  });
  return [
    `the machine's CPU meanwhile (every process: apps, S3, PostgreSQL, zstd, tar, pgBackRest), medians; ${cores} cores, so ${cores.toFixed(2)} busy is all of them`,
    '',
    ...alignedTable(['', 'wall s', 'CPU s', 'cores busy'], cells),
  ];
}
