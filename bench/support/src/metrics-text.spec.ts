import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { histogramSumsBy, histogramTotals, plainMetric } from './metrics-text.js';

const PHASES = 'pgcloud_restore_phase_duration_seconds';

/** Prometheus text as prom-client writes a histogram: buckets, then `_sum` and `_count`. */
function histogramText(series: { labels: string; sum: number; count: number }[]): string {
  return [
    `# HELP ${PHASES} How long the phases of restores took.`,
    `# TYPE ${PHASES} histogram`,
    ...series.flatMap(({ labels, sum, count }) => [
      `${PHASES}_bucket{le="+Inf",${labels}} ${count}`,
      `${PHASES}_sum{${labels}} ${sum}`,
      `${PHASES}_count{${labels}} ${count}`,
    ]),
    'pgcloud_restore_duration_seconds_sum{kind="pitr",target="in_place",outcome="completed"} 99',
    '',
  ].join('\n');
}

const TEXT = histogramText([
  { labels: 'kind="pitr",target="target_database",phase="swap",service="p"', sum: 0.5, count: 1 },
  { labels: 'kind="pitr",target="target_database",phase="plan",service="p"', sum: 0.25, count: 1 },
  { labels: 'kind="backup",target="in_place",phase="swap",service="p"', sum: 7, count: 2 },
]);

describe('histogramTotals', () => {
  it('adds the `_sum` and `_count` of the series whose labels include the given ones', () => {
    assert.deepEqual(histogramTotals(TEXT, PHASES, { kind: 'pitr' }), { sum: 0.75, count: 2 });
    assert.deepEqual(histogramTotals(TEXT, PHASES), { sum: 7.75, count: 4 });
  });

  it('answers zeros for a histogram the text does not name', () => {
    assert.deepEqual(histogramTotals(TEXT, 'pgcloud_nothing_seconds'), { sum: 0, count: 0 });
  });
});

describe('histogramSumsBy', () => {
  it('gives the `_sum` of each value of a label, among the series that match', () => {
    const sums = histogramSumsBy(TEXT, PHASES, 'phase', {
      kind: 'pitr',
      target: 'target_database',
    });
    assert.deepEqual(
      [...sums],
      [
        ['swap', 0.5],
        ['plan', 0.25],
      ],
    );
  });
});

describe('plainMetric', () => {
  it('adds up its series, labelled or not, and answers 0 for one not written yet', () => {
    const text =
      '# HELP x_total X.\n# TYPE x_total counter\nx_total{service="a"} 40\nx_total 2\nx_total_other 7\n';
    assert.equal(plainMetric(text, 'x_total'), 42);
    assert.equal(plainMetric(text, 'y_total'), 0);
  });
});
