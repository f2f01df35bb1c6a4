// The sizes a bench runs at, and how its figures grow with them: each figure's median at
// every size, and its seconds per GB from one size to the next. A cost that grows with the
// data shows in the second; one paid once whatever the size (a start, a check) does not.
import type { Samples } from './bench-samples.js';
import { alignedTable, median } from './bench-samples.js';

const MB = 1_000_000;

/** A figure's medians, one per size, in the order of the sizes. */
export interface SizedMedians {
  label: string;
  medians: readonly number[];
}

/** A figure's medians by size, from its samples at each size (in the order of the sizes). */
export function mediansBySize(bySize: readonly Samples[]): SizedMedians {
  return { label: bySize[0]?.label ?? '', medians: bySize.map((s) => median(s.values)) };
}

/** `ours / baseline` of the medians at each size, labelled `label`. */
export function ratiosBySize(
  label: string,
  ours: readonly Samples[],
  baseline: readonly Samples[],
): SizedMedians {
  return {
    label,
    medians: ours.map((s, i) => median(s.values) / median(baseline[i]?.values ?? [])),
  };
}

/**
 * BENCH_SIZES_MB: a comma-separated list of sizes in MB, each a whole number above 0 and
 * larger than the one before it (`fallback` unless set).
 */
export function benchSizesMb(
  fallback: string,
  env: Record<string, string | undefined> = process.env,
): number[] {
  const raw = env['BENCH_SIZES_MB'] ?? fallback;
  const sizes = raw.split(',').map((size) => Number(size.trim()));
  const ascending = sizes.every((size, i) => i === 0 || size > (sizes[i - 1] ?? Infinity));
  if (!sizes.every((size) => Number.isInteger(size) && size > 0) || !ascending)
    throw new Error(
      `BENCH_SIZES_MB must be whole numbers of MB above 0, ascending, comma-separated, not "${raw}"`,
    );
  return sizes;
}

/** Seconds per GB (1000 MB) from each size to the next: the rise of the median over the rise of the size. */
export function secondsPerGb(sizesMb: readonly number[], medians: readonly number[]): number[] {
  return sizesMb.slice(1).map((size, i) => {
    const rise = (medians[i + 1] ?? Number.NaN) - (medians[i] ?? Number.NaN);
    return rise / ((size - (sizesMb[i] ?? Number.NaN)) / 1000);
  });
}

/** Bytes as whole MB (10^6 bytes), as the benches print sizes. */
export function megabytes(bytes: number): number {
  return Math.round(bytes / MB);
}

/**
 * A table of one row per figure: its median at each size (`sizesMb`, as measured), then,
 * with `growth`, its seconds per GB from each size to the next; values with `digits`
 * decimals, '-' where there is none.
 */
export function formatBySize(
  sizesMb: readonly number[],
  rows: readonly SizedMedians[],
  { growth = true, digits = 2 }: { growth?: boolean; digits?: number } = {},
): string[] {
  const steps = sizesMb.slice(1).map((size, i) => `${sizesMb[i]}->${size} MB, s/GB`);
  const header = ['', ...sizesMb.map((size) => `${size} MB`), ...(growth ? steps : [])];
  const figure = (value: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
  const cells = rows.map(({ label, medians }) => [
    label,
    ...sizesMb.map((_, i) => figure(medians[i] ?? Number.NaN)),
    ...(growth ? secondsPerGb(sizesMb, medians).map(figure) : []),
  ]);
  return alignedTable(header, cells);
}
