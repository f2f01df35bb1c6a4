// Histograms read from an app's Prometheus text (/metrics on its management port), as the
// benches read them before and after a run: the difference is what the run added.

/** Sum and count of a histogram's series. */
export interface HistogramTotals {
  sum: number;
  count: number;
}

/** One `_sum` or `_count` line of a histogram: its labels and value. */
interface SeriesLine {
  series: 'sum' | 'count';
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text an app serves on `${managementUrl}/metrics`. */
export async function scrapeMetrics(managementUrl: string): Promise<string> {
  const res = await fetch(`${managementUrl}/metrics`);
  if (!res.ok) throw new Error(`${managementUrl}/metrics answered ${res.status}`);
  return res.text();
}

function seriesLines(text: string, name: string, labels: Record<string, string>): SeriesLine[] {
  return text.split('\n').flatMap((line) => {
    const match = /^(\w+)_(sum|count)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) return [];
    const found = Object.fromEntries(
      [...(match[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    ) as Record<string, string>;
    if (!Object.entries(labels).every(([k, v]) => found[k] === v)) return [];
    return [{ series: match[2] as 'sum' | 'count', labels: found, value: Number(match[4]) }];
  });
}

/** Sum and count of the histogram's series whose labels include `labels`. */
export function histogramTotals(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): HistogramTotals {
  const totals = { sum: 0, count: 0 };
  for (const { series, value } of seriesLines(text, name, labels)) totals[series] += value;
  return totals;
}

/**
 * The histogram's `_sum` for each value of the label `by`, over the series whose labels
 * include `labels`, in the order the text first names each value.
 */
export function histogramSumsBy(
  text: string,
  name: string,
  by: string,
  labels: Record<string, string> = {},
): Map<string, number> {
  const sums = new Map<string, number>();
  for (const { series, labels: found, value } of seriesLines(text, name, labels)) {
    const key = found[by];
    if (series !== 'sum' || key === undefined) continue;
    sums.set(key, (sums.get(key) ?? 0) + value);
  }
  return sums;
}

/** A counter or gauge in the text, summed over its series; 0 when it is not there yet. */
export function plainMetric(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
