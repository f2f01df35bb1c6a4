import type { RestoreStatus } from '@pgcloud/contracts';
import type { EntityManager, FindOptionsWhere } from 'typeorm';
import { In } from 'typeorm';
import type { RestoreEndFields, RestoreMove, RestoreProgressFields } from './restore-lifecycle.js';
import { RESTORE_MOVES, phasesUpTo, restoreMayMove } from './restore-lifecycle.js';
import { RestoreEntity } from './restore.entity.js';

// provisioner.restores: how a restore's status and phase are written, by the table of
// restore-lifecycle.ts and in the caller's transaction.

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
