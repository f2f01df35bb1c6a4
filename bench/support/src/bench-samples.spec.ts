import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatRatioOfMedians,
  formatSamples,
  median,
  spread,
  stepRows,
  withParts,
} from './bench-samples.js';

describe('median', () => {
  it('takes the middle sample of an odd count, whatever the order', () => {
    assert.equal(median([3, 1, 2]), 2);
  });

  it('takes the mean of the two middle samples of an even count', () => {
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });

  it('is NaN without samples', () => {
    assert.ok(Number.isNaN(median([])));
  });
});

describe('spread', () => {
  it('gives the lowest, the highest, and the highest as a percentage of the lowest', () => {
    assert.deepEqual(spread([5, 4, 6]), { min: 4, max: 6, maxOverMinPercent: 150 });
  });

  it('has no percentage when the lowest sample is 0', () => {
    assert.ok(Number.isNaN(spread([0, 1]).maxOverMinPercent));
  });
});

describe('formatSamples', () => {
  it('prints every sample, the median and the spread, in aligned columns', () => {
    const lines = formatSamples([
      ...withParts({ label: 'pgcloud', values: [4.2, 3.9, 5.1] }, [
        { label: 'download', values: [1, 0, 2] },
      ]),
      { label: 'by hand', values: [1.5, 1.5, 1.5] },
    ]);
    assert.deepEqual(lines, [
      '              #1    #2    #3  median   min   max  max/min',
      'pgcloud     4.20  3.90  5.10    4.20  3.90  5.10     131%',
      '  download  1.00  0.00  2.00    1.00  0.00  2.00        -',
      'by hand     1.50  1.50  1.50    1.50  1.50  1.50     100%',
    ]);
  });

  it('leaves the cells of samples a row does not have empty', () => {
    const lines = formatSamples(
      [
        { label: 'a', values: [1, 3] },
        { label: 'b', values: [2] },
      ],
      0,
    );
    assert.deepEqual(lines, [
      '   #1  #2  median  min  max  max/min',
      'a   1   3       2    1    3     300%',
      'b   2           2    2    2     100%',
    ]);
  });
});

describe('formatRatioOfMedians', () => {
  it('prints the ratio of the medians with the goal beside it', () => {
    const line = formatRatioOfMedians(
      { label: 'pgcloud', values: [3, 4, 100] },
      { label: 'by hand', values: [2, 2, 3] },
      1.3,
    );
    assert.equal(line, 'ratio of the medians, pgcloud / by hand: 2.00  (goal: at most 1.3)');
  });

  it('prints the ratio alone when there is no goal', () => {
    const line = formatRatioOfMedians(
      { label: 'pgcloud', values: [3] },
      { label: 'pgBackRest', values: [4] },
    );
    assert.equal(line, 'ratio of the medians, pgcloud / pgBackRest: 0.75');
  });
});

describe('stepRows', () => {
  it('gives a row per step, its values from each sample in turn', () => {
    assert.deepEqual(
      stepRows(
        ['download', 'start'],
        [
          [1, 2],
          [3, 4],
        ],
      ),
      [
        { label: 'download', values: [1, 3] },
        { label: 'start', values: [2, 4] },
      ],
    );
  });
});
