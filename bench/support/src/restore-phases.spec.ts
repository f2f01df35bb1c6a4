import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MachineCpu } from './machine-cpu.js';
import { cpuOfPhases, phaseRows, phasesBetween } from './restore-phases.js';

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

describe('cpuOfPhases', () => {
  it('reads each phase one after another, one that runs beside them from the start', () => {
    let busy = 0;
    const cpu = new MachineCpu(() => busy);
    for (const [at, b] of [
      [0, 0],
      [1000, 1],
      [2000, 3],
      [4000, 4],
    ] as const) {
      busy = b;
      cpu.sample(at);
    }
    const phases = new Map([
      ['create', 2],
      ['plan', 1],
      ['download', 3],
    ]);
    assert.deepEqual(
      [...cpuOfPhases(cpu, 0, phases)].map(([p, s]) => [p, s.toFixed(2)]),
      [
        ['create', '3.00'],
        ['plan', '1.00'],
        ['download', '3.00'],
      ],
    );
  });
});
