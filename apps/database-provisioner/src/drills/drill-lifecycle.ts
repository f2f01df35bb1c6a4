import type { DrillStatus } from '@pgcloud/contracts';

/**
 * How a drill's status moves (docs/api/drills.md#a-drill): a job takes it up (again, after
 * a crash) and it ends once, passed or failed. The repository writes no other.
 */
export const DRILL_MOVES = {
  start: { from: ['pending', 'running'], to: 'running' },
  pass: { from: ['pending', 'running'], to: 'passed' },
  fail: { from: ['pending', 'running'], to: 'failed' },
} as const satisfies Record<string, { from: readonly DrillStatus[]; to: DrillStatus }>;

export type DrillMove = keyof typeof DRILL_MOVES;
