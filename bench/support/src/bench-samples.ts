// Figures a bench takes a few samples of (a restore's time, each of its phases): every
// sample, then their median and spread, so a reader sees how far one run can be trusted.

/** The samples of one figure, in the order they were taken. */
export interface Samples {
  label: string;
  values: number[];
}

/** The lowest and highest sample, and the highest as a percentage of the lowest. */
export interface Spread {
  min: number;
  max: number;
  /** 100 * max / min: 100 when every sample is the same; NaN when min is not above 0. */
  maxOverMinPercent: number;
}

/** The median: the middle value, or the mean of the two middle ones for an even count. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle] ?? Number.NaN;
  return ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

/** The spread of the samples (all NaN without any). */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0)
    return { min: Number.NaN, max: Number.NaN, maxOverMinPercent: Number.NaN };
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { min, max, maxOverMinPercent: min > 0 ? (100 * max) / min : Number.NaN };
}

function percent(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(0)}%` : '-';
}

/**
 * Lines of a table in columns: the first (the labels) aligned left, the others right, two
 * spaces apart, the header first.
 */
export function alignedTable(header: readonly string[], cells: readonly string[][]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...cells.map((row) => row[column]?.length ?? 0)),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)];
}

/**
 * A table of one row per figure: each sample (#1, #2, ...), the median, the lowest and the
 * highest, and max/min as a percentage; values with `digits` decimals.
 */
export function formatSamples(rows: readonly Samples[], digits = 2): string[] {
  const count = Math.max(0, ...rows.map((r) => r.values.length));
  const header = [
    '',
    ...Array.from({ length: count }, (_, i) => `#${i + 1}`),
    'median',
    'min',
    'max',
    'max/min',
  ];
  const cells = rows.map(({ label, values }) => {
    const { min, max, maxOverMinPercent } = spread(values);
    const samples = Array.from({ length: count }, (_, i) => values[i]?.toFixed(digits) ?? '');
    const figures = [median(values), min, max].map((v) => v.toFixed(digits));
    return [label, ...samples, ...figures, percent(maxOverMinPercent)];
  });
  return alignedTable(header, cells);
}

/** Rows of `labels`, the i-th value of each from the i-th of `steps` of every sample. */
export function stepRows(labels: readonly string[], steps: readonly number[][]): Samples[] {
  return labels.map((label, i) => ({ label, values: steps.map((s) => s[i] ?? Number.NaN) }));
}

/** A figure's row, then the rows of its parts indented beneath it, for formatSamples. */
export function withParts(total: Samples, parts: readonly Samples[]): Samples[] {
  return [total, ...parts.map((part) => ({ ...part, label: `  ${part.label}` }))];
}

/** `ours / baseline` of the medians, with the goal beside it if any (printed, never asserted). */
export function formatRatioOfMedians(
  ours: Samples,
  baseline: Samples,
  goalAtMost?: number,
): string {
  const ratio = median(ours.values) / median(baseline.values);
  return (
    `ratio of the medians, ${ours.label} / ${baseline.label}: ${ratio.toFixed(2)}` +
    (goalAtMost === undefined ? '' : `  (goal: at most ${goalAtMost})`)
  );
}
