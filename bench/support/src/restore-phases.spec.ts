import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { phaseRows, phasesBetween } from './restore-phases.js';

describe('phasesBetween', () => {
  it('answers what each phase added, in the order a restore runs them', () => {
    const before = new Map([['swap', 1]]);
    const after = new Map([
      ['swap', 1.5],
      ['future_phase', 2],
      ['plan', 0.25],
    ]);
    assert.deepEqual(
      [...phasesBetween(before, after)],
      [
        ['plan', 0.25],
        ['swap', 0.5],
        ['future_phase', 2],
      ],
    );
  });
});

describe('phaseRows', () => {
  it('gives a row per phase and what each restore took outside the phases', () => {
    const rows = phaseRows(
      [
        new Map([
          ['download', 2],
          ['swap', 1],
        ]),
        new Map([['download', 3]]),
      ],
      [3.5, 4],
    );
    assert.deepEqual(rows, [
      { label: 'download', values: [2, 3] },
      { label: 'swap', values: [1, 0] },
      { label: 'outside the phases', values: [0.5, 1] },
    ]);
  });

  it('lists a phase that runs beside the others apart from their sum', () => {
    const rows = phaseRows(
      [
        new Map([
          ['create', 1],
          ['download', 2],
        ]),
      ],
      [2.5],
    );
    assert.deepEqual(rows, [
      { label: 'create (beside plan, download)', values: [1] },
      { label: 'download', values: [2] },
      { label: 'outside the phases', values: [0.5] },
    ]);
  });
});
