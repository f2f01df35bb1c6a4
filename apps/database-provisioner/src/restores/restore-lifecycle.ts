import type { RestorePhase, RestoreStatus } from '@pgcloud/contracts';
import { RESTORE_PHASES } from '@pgcloud/contracts';
import type { EntityManager, FindOptionsWhere } from 'typeorm';
import { In } from 'typeorm';
import { RestoreEntity } from './restore.entity.js';

/**
 * A restore's life (docs/api/restores.md#its-life): the moves its status makes, and from
 * where. Every write of a restore's `status` or `phase` goes through this file, in the
 * caller's transaction; a move the table does not hold is refused before any SQL.
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

/**
 * Makes `move` on the restore if its status is one the move starts from (`from` narrows
 * them, as a caller that read the status does). False when the restore was elsewhere.
 */
export async function moveRestore(
  manager: EntityManager,
  restoreId: string,
  move: RestoreMove,
  fields: RestoreEndFields = {},
  from: readonly RestoreStatus[] = RESTORE_MOVES[move].from,
): Promise<boolean> {
  const refused = from.filter((status) => !restoreMayMove(status, move));
  if (refused.length > 0) throw new Error(`a restore cannot ${move} from ${refused.join(', ')}`);
  const moved = await manager.update(
    RestoreEntity,
    { id: restoreId, status: In([...from]) },
    { status: RESTORE_MOVES[move].to, ...fields },
  );
  return moved.affected === 1;
}

/**
 * Writes a running restore's progress. Its phase only goes forward: a write that would
 * take it back (a late write of an earlier phase) changes nothing. `also` adds conditions
 * (the swap's: no cancel asked). False when nothing was written.
 */
export async function advanceRestore(
  manager: EntityManager,
  restoreId: string,
  fields: RestoreProgressFields,
  also: FindOptionsWhere<RestoreEntity> = {},
): Promise<boolean> {
  const where: FindOptionsWhere<RestoreEntity> = { ...also, id: restoreId, status: 'running' };
  if (fields.phase !== undefined) where.phase = In(phasesUpTo(fields.phase));
  const moved = await manager.update(RestoreEntity, where, fields);
  return moved.affected === 1;
}

/** The phases a restore may be in before moving to `phase`: every one up to it. */
function phasesUpTo(phase: RestorePhase): RestorePhase[] {
  return RESTORE_PHASES.slice(0, RESTORE_PHASES.indexOf(phase) + 1);
}
