import type { EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { queryRows } from '@pgcloud/postgres';
import type { DatabaseRecordStatus } from './database.entity.js';
import { DatabaseEntity } from './database.entity.js';

/**
 * A database's life (docs/api/databases.md#its-life): the moves its status makes, and from
 * where. Every write of a database's `status` goes through this file, in the caller's
 * transaction; a move the table does not hold is refused before any SQL.
 */
export const DATABASE_MOVES = {
  /** Its server accepted a TLS login with the stored credentials. */
  provisioned: { from: ['provisioning'], to: 'running' },
  /** Its server could not be made ready. */
  provisionFailed: { from: ['provisioning'], to: 'failed' },
  /** An in-place restore holds it. */
  restore: { from: ['running'], to: 'restoring' },
  /** A restore ended with the database serving: its restored data, or its own again. */
  restored: { from: ['restoring'], to: 'running' },
  /** A restore into it failed, or its own data could not be brought back. */
  restoreFailed: { from: ['restoring'], to: 'failed' },
  /** Reconcile found its server and data gone. */
  lost: { from: ['running', 'restoring'], to: 'failed' },
  /** Deleted: it leaves the API at once, and its removal job takes the rest. */
  remove: { from: ['provisioning', 'running', 'restoring', 'failed'], to: 'deleting' },
} as const satisfies Record<
  string,
  { from: readonly DatabaseRecordStatus[]; to: DatabaseRecordStatus }
>;

export type DatabaseMove = keyof typeof DATABASE_MOVES;

/** What a move writes besides the status. */
export type DatabaseMoveFields = Partial<
  Pick<DatabaseEntity, 'error' | 'host' | 'storageFull' | 'storageFencedAt'>
>;

/** True when the table lets a database in `from` make `move`. */
export function databaseMayMove(from: DatabaseRecordStatus, move: DatabaseMove): boolean {
  return (DATABASE_MOVES[move].from as readonly DatabaseRecordStatus[]).includes(from);
}

/** Makes `move` on the database if its status is one the move starts from. */
export async function moveDatabase(
  manager: EntityManager,
  databaseId: string,
  move: Exclude<DatabaseMove, 'remove'>,
  fields: DatabaseMoveFields = {},
): Promise<boolean> {
  const { from, to } = DATABASE_MOVES[move];
  const moved = await manager.update(
    DatabaseEntity,
    { id: databaseId, status: In([...from]) },
    { status: to, ...fields },
  );
  return moved.affected === 1;
}

/**
 * Moves the databases to `deleting`, in one statement, so of two deletes at once only one
 * moves a record: answers those it moved.
 */
export function removeDatabases(
  manager: EntityManager,
  databaseIds: string[],
): Promise<{ id: string; project_id: string }[]> {
  return queryRows<{ id: string; project_id: string }>(
    manager,
    `UPDATE provisioner.databases SET status = 'deleting', updated_at = now()
      WHERE id = ANY($1) AND status = ANY($2)
      RETURNING id, project_id`,
    [databaseIds, [...DATABASE_MOVES.remove.from]],
  );
}
