import { median } from './bench-samples.js';

/** The times of one target, in milliseconds, in the order they were taken. */
export interface Series {
  target: string;
  times: number[];
}

interface Figures {
  median: number;
  p90: number;
}

const COLUMNS = ['target', 'runs', 'median ms', 'p90 ms'] as const;
const WIDTHS = [10, 6, 12, 10];

/** The value at rank p% of ascending `sorted` (nearest rank, as in bench:api). */
function percentile(sorted: number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1] ?? Number.NaN;
}

function figuresOf(times: number[]): Figures {
  const sorted = [...times].sort((a, b) => a - b);
  return { median: median(sorted), p90: percentile(sorted, 90) };
}

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
    .join('');
}

function ratio(ours: number, baseline: number): string {
  return `${(ours / baseline).toFixed(2)}x`;
}

/** The table of median and p90 per target, then the ratios ours/baseline of both. */
export function formatReport(ours: Series, baseline: Series): string {
  const a = figuresOf(ours.times);
  const b = figuresOf(baseline.times);
  const targetWidth = Math.max(WIDTHS[0] ?? 0, ours.target.length + 2, baseline.target.length + 2);
  const widths = [targetWidth, ...WIDTHS.slice(1)];
  const lines = [
    row(COLUMNS, widths),
    row(
      COLUMNS.map((_, i) => '-'.repeat(widths[i] ?? 0)),
      widths,
    ),
  ];
  for (const [series, figures] of [
    [ours, a],
    [baseline, b],
  ] as const) {
    lines.push(
      row(
        [
          series.target,
          String(series.times.length),
          figures.median.toFixed(1),
          figures.p90.toFixed(1),
        ],
        widths,
      ),
    );
  }
  lines.push(
    '',
    `${ours.target}/${baseline.target}: median ${ratio(a.median, b.median)}, ` +
      `p90 ${ratio(a.p90, b.p90)}`,
  );
  return lines.join('\n');
}
