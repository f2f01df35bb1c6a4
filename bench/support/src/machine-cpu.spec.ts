import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MachineCpu, busySeconds, cpuOfSteps, cpuRows, formatCpuRows } from './machine-cpu.js';

describe('busySeconds', () => {
  it('adds user, nice, system, irq, softirq and steal, not idle nor iowait', () => {
    const stat = 'cpu  100 20 30 5000 700 4 6 10 99 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n';
    assert.equal(busySeconds(stat), 1.7);
  });

  it('refuses what is not /proc/stat', () => {
    assert.throws(() => busySeconds('intr 1 2 3'), /does not start/);
  });
});

describe('MachineCpu', () => {
  function readings(pairs: [number, number][]): MachineCpu {
    let busy = 0;
    const cpu = new MachineCpu(() => busy);
    for (const [at, b] of pairs) {
      busy = b;
      cpu.sample(at);
    }
    return cpu;
  }

  it('answers the CPU between two moments, between readings at an even pace', () => {
    const cpu = readings([
      [1000, 10],
      [1100, 10.2],
      [1200, 10.2],
      [1300, 10.3],
    ]);
    assert.equal(cpu.secondsBetween(1000, 1300).toFixed(2), '0.30');
    assert.equal(cpu.secondsBetween(1050, 1250).toFixed(2), '0.15');
    assert.equal(cpu.secondsBetween(1100, 1100), 0);
  });

  it('answers NaN outside the readings', () => {
    const cpu = readings([
      [1000, 10],
      [1100, 11],
    ]);
    assert.ok(Number.isNaN(cpu.secondsBetween(900, 1100)));
    assert.ok(Number.isNaN(cpu.secondsBetween(1000, 1200)));
  });

  it('splits steps that ran one after another', () => {
    const cpu = readings([
      [0, 0],
      [1000, 2],
      [3000, 3],
    ]);
    assert.deepEqual(
      cpuOfSteps(cpu, 0, [1, 2]).map((s) => s.toFixed(2)),
      ['2.00', '1.00'],
    );
  });

  it('reads this machine, going forward', () => {
    const cpu = new MachineCpu();
    cpu.sample(1);
    cpu.sample(2);
    assert.ok(cpu.secondsBetween(1, 2) >= 0);
  });
});

describe('formatCpuRows', () => {
  it('prints the medians of wall, CPU and cores busy', () => {
    const lines = formatCpuRows(
      [
        { label: 'restore', wall: [2, 4, 3], cpu: [3, 4, 6] },
        { label: '  download', wall: [0, 1], cpu: [0, 1.5] },
      ],
      2,
    );
    assert.match(lines[0] ?? '', /2 cores, so 2.00 busy is all of them/);
    assert.deepEqual(lines.slice(2), [
      '            wall s  CPU s  cores busy',
      'restore       3.00   4.00        1.50',
      '  download    0.50   0.75        1.50',
    ]);
  });
});

describe('cpuRows', () => {
  it('pairs each wall row with the CPU row of the same label, and refuses a shifted one', () => {
    const wall = [
      { label: 'restore', values: [2] },
      { label: '  download', values: [1] },
    ];
    assert.deepEqual(
      cpuRows(wall, [
        { label: 'restore', values: [3] },
        { label: '  download', values: [2] },
      ]),
      [
        { label: 'restore', wall: [2], cpu: [3] },
        { label: '  download', wall: [1], cpu: [2] },
      ],
    );
    assert.throws(() => cpuRows(wall, [{ label: '  download', values: [2] }]), /CPU row 0/);
  });
});
