import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  benchSizesMb,
  formatBySize,
  megabytes,
  mediansBySize,
  ratiosBySize,
  secondsPerGb,
} from './size-growth.js';

describe('benchSizesMb', () => {
  it('reads BENCH_SIZES_MB, spaces allowed', () => {
    assert.deepEqual(benchSizesMb('250', { BENCH_SIZES_MB: '60, 120' }), [60, 120]);
  });

  it('takes the fallback when it is not set', () => {
    assert.deepEqual(benchSizesMb('250,1000,2000', {}), [250, 1000, 2000]);
  });

  it('refuses sizes that are not whole, above 0 and ascending', () => {
    for (const raw of ['', '250,abc', '0,100', '1000,250', '250,250', '2.5'])
      assert.throws(() => benchSizesMb('250', { BENCH_SIZES_MB: raw }), /BENCH_SIZES_MB/);
  });
});

describe('secondsPerGb', () => {
  it('divides the rise of the median by the rise of the size, in GB', () => {
    assert.deepEqual(secondsPerGb([250, 1250, 2250], [2, 6, 7]), [4, 1]);
  });

  it('has no step for a single size', () => {
    assert.deepEqual(secondsPerGb([250], [2]), []);
  });
});

describe('megabytes', () => {
  it('rounds bytes to whole MB of 10^6 bytes', () => {
    assert.equal(megabytes(262_499_999), 262);
  });
});

describe('formatBySize', () => {
  it('prints each median by size, then the seconds per GB of each step, aligned', () => {
    const lines = formatBySize([250, 1250], [{ label: 'pgcloud', medians: [2, 6] }]);
    assert.deepEqual(lines, [
      '         250 MB  1250 MB  250->1250 MB, s/GB',
      'pgcloud    2.00     6.00                4.00',
    ]);
  });

  it('leaves the growth out when asked, and prints - for a missing median', () => {
    const lines = formatBySize([250, 1250], [{ label: 'ratio', medians: [0.5] }], {
      growth: false,
    });
    assert.deepEqual(lines, ['       250 MB  1250 MB', 'ratio    0.50        -']);
  });
});

describe('mediansBySize and ratiosBySize', () => {
  const ours = [
    { label: 'pgcloud', values: [3, 1, 2] },
    { label: 'pgcloud', values: [8, 4] },
  ];
  const baseline = [
    { label: 'pgBackRest', values: [4] },
    { label: 'pgBackRest', values: [3, 3, 9] },
  ];

  it("takes each size's median under the figure's label", () => {
    assert.deepEqual(mediansBySize(ours), { label: 'pgcloud', medians: [2, 6] });
  });

  it('divides the medians size by size', () => {
    assert.deepEqual(ratiosBySize('ours / theirs', ours, baseline), {
      label: 'ours / theirs',
      medians: [0.5, 2],
    });
  });
});
