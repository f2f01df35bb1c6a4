import type { RestorePhase, RestoreStatus } from '@pgcloud/contracts';
import { RESTORE_PHASES } from '@pgcloud/contracts';
import type { RestoreEntity } from './restore.entity.js';

/**
 * A restore's life (docs/api/restores.md#its-life): the moves its status makes, and from
 * where. Every write of a restore's `status` or `phase` is made by restores.repository.ts
 * (`moveRestore`, `advanceRestore`) in the caller's transaction, from this table.
 */
export const RESTORE_MOVES = {
  /** A job attempt takes the restore up. */
  start: { from: ['pending'], to: 'running' },
  /** Swapped in and checked: the end of a restore that worked. */
  complete: { from: ['running'], to: 'completed' },
  /** A failure, or a party deleted meanwhile. */
  fail: { from: ['pending', 'running'], to: 'failed' },
  /** A cancel the job saw before the swap. */
  cancel: { from: ['pending', 'running'], to: 'cancelled' },
} as const satisfies Record<string, { from: readonly RestoreStatus[]; to: RestoreStatus }>;

export type RestoreMove = keyof typeof RESTORE_MOVES;

/** Where every restore begins. */
export const RESTORE_BEGINS = { status: 'pending', phase: 'queued' } as const;

/** What a move writes besides the status. */
export type RestoreEndFields = Partial<
  Pick<RestoreEntity, 'phase' | 'error' | 'etaSeconds' | 'completedAt'>
>;

/** What a running restore writes as it goes: its phase and its numbers. */
export type RestoreProgressFields = Partial<
  Pick<
    RestoreEntity,
    'phase' | 'bytesDone' | 'bytesTotal' | 'walFilesDone' | 'walFilesTotal' | 'etaSeconds'
  >
>;

/** True when the table lets a restore in `from` make `move`. */
export function restoreMayMove(from: RestoreStatus, move: RestoreMove): boolean {
  return (RESTORE_MOVES[move].from as readonly RestoreStatus[]).includes(from);
}

/** The phases a restore may be in before moving to `phase`: every one up to it. */
export function phasesUpTo(phase: RestorePhase): RestorePhase[] {
  return RESTORE_PHASES.slice(0, RESTORE_PHASES.indexOf(phase) + 1);
}
