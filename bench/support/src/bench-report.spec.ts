import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatReport } from './bench-report.js';

describe('formatReport', () => {
  it('prints median and p90 per target, then the ratios', () => {
    const text = formatReport(
      { target: 'pgcloud', times: [30, 10, 20] },
      { target: 'createdb -T', times: [40, 80, 60, 100] },
    );
    const lines = text.split('\n');
    assert.match(lines[0] ?? '', /^target\s+runs\s+median ms\s+p90 ms$/);
    assert.match(lines[2] ?? '', /^pgcloud\s+3\s+20\.0\s+30\.0$/);
    assert.match(lines[3] ?? '', /^createdb -T\s+4\s+70\.0\s+100\.0$/);
    assert.equal(lines.at(-1), 'pgcloud/createdb -T: median 0.29x, p90 0.30x');
    // The target column is wide enough for the longest name.
    assert.equal(lines[2]?.indexOf('3'), lines[3]?.indexOf('4'));
  });
});
