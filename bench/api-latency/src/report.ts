import type { LoadFigures } from './load.js';

/** One measured row: which route, which server, how many clients, what came out. */
export interface Measurement {
  route: string;
  target: string;
  connections: number;
  figures: LoadFigures;
}

const COLUMNS = ['route', 'target', 'connections', 'p50 ms', 'p99 ms', 'req/s'] as const;
const WIDTHS = [30, 22, 12, 10, 10, 10] as const;

function row(cells: readonly string[]): string {
  return cells
    .map((cell, i) => (i < 2 ? cell.padEnd(WIDTHS[i] ?? 0) : cell.padStart(WIDTHS[i] ?? 0)))
    .join('');
}

function ratio(ours: number, baseline: number): string {
  return `${(ours / baseline).toFixed(2)}x`;
}

function tableLines(measurements: Measurement[]): string[] {
  const lines = [row(COLUMNS), row(COLUMNS.map((_, i) => '-'.repeat(WIDTHS[i] ?? 0)))];
  for (const { route, target, connections, figures } of measurements) {
    lines.push(
      row([
        route,
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

/** For each route and concurrency: every other target against `baseline`. */
function ratioLines(measurements: Measurement[], baseline: string): string[] {
  const lines: string[] = [];
  const find = (route: string, target: string, connections: number) =>
    measurements.find(
      (m) => m.route === route && m.target === target && m.connections === connections,
    )?.figures;
  for (const { route, target, connections, figures } of measurements) {
    const base = find(route, baseline, connections);
    if (target === baseline || !base) continue;
    lines.push(
      `${route}, ${target}/${baseline} at ${connections} connection` +
        `${connections === 1 ? '' : 's'}: p50 ${ratio(figures.p50, base.p50)}, ` +
        `p99 ${ratio(figures.p99, base.p99)}, ` +
        `req/s ${ratio(figures.requestsPerSecond, base.requestsPerSecond)}`,
    );
  }
  return lines;
}

/** The table of every measurement, then each target's ratios to `baseline`. */
export function formatReport(measurements: Measurement[], baseline: string): string {
  return [...tableLines(measurements), '', ...ratioLines(measurements, baseline)].join('\n');
}
