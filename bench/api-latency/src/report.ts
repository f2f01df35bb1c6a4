import type { LoadFigures } from './load.js';

/** One measured row: which server, how many clients, what came out. */
export interface Measurement {
  target: string;
  connections: number;
  figures: LoadFigures;
}

const COLUMNS = ['target', 'connections', 'p50 ms', 'p99 ms', 'req/s'] as const;
const WIDTHS = [10, 12, 10, 10, 10] as const;

function row(cells: readonly string[]): string {
  return cells
    .map((cell, i) => (i === 0 ? cell.padEnd(WIDTHS[i] ?? 0) : cell.padStart(WIDTHS[i] ?? 0)))
    .join('');
}

function ratio(ours: number, baseline: number): string {
  return `${(ours / baseline).toFixed(2)}x`;
}

function tableLines(measurements: Measurement[]): string[] {
  const lines = [row(COLUMNS), row(COLUMNS.map((_, i) => '-'.repeat(WIDTHS[i] ?? 0)))];
  for (const { target, connections, figures } of measurements) {
    lines.push(
      row([
        target,
        String(connections),
        figures.p50.toFixed(2),
        figures.p99.toFixed(2),
        figures.requestsPerSecond.toFixed(0),
      ]),
    );
  }
  return lines;
}

function ratioLines(measurements: Measurement[], ours: string, baseline: string): string[] {
  const lines: string[] = [];
  for (const connections of new Set(measurements.map((m) => m.connections))) {
    const find = (target: string): LoadFigures | undefined =>
      measurements.find((m) => m.target === target && m.connections === connections)?.figures;
    const a = find(ours);
    const b = find(baseline);
    if (!a || !b) continue;
    lines.push(
      `${ours}/${baseline} at ${connections} connection${connections === 1 ? '' : 's'}: ` +
        `p50 ${ratio(a.p50, b.p50)}, p99 ${ratio(a.p99, b.p99)}, ` +
        `req/s ${ratio(a.requestsPerSecond, b.requestsPerSecond)}`,
    );
  }
  return lines;
}

/** The table of every measurement, then the ratio ours/baseline per concurrency. */
export function formatReport(measurements: Measurement[], ours: string, baseline: string): string {
  return [...tableLines(measurements), '', ...ratioLines(measurements, ours, baseline)].join('\n');
}
