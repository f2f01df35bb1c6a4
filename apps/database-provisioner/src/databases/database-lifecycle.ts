import type { DatabaseEntity, DatabaseRecordStatus } from './database.entity.js';

/**
 * A database's life (docs/api/databases.md#its-life): the moves its status makes, and from
 * where. Every write of a database's `status` is a move of this table, made by
 * databases.repository.ts's `moveDatabase` in the caller's transaction.
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
  /** A new size was asked for: its resize job applies it (docs/api/databases.md#resizing). */
  resize: { from: ['running'], to: 'resizing' },
  /** Its server runs with the new size, or (a resize that could not be applied) the old. */
  resized: { from: ['resizing'], to: 'running' },
  /** Reconcile found its server and data gone. */
  lost: { from: ['running', 'restoring'], to: 'failed' },
  /** Deleted: it leaves the API at once, and its removal job takes the rest. */
  remove: {
    from: ['provisioning', 'running', 'restoring', 'resizing', 'failed'],
    to: 'deleting',
  },
} as const satisfies Record<
  string,
  { from: readonly DatabaseRecordStatus[]; to: DatabaseRecordStatus }
>;

export type DatabaseMove = keyof typeof DATABASE_MOVES;

/** What a move writes besides the status. */
export type DatabaseMoveFields = Partial<
  Pick<
    DatabaseEntity,
    | 'error'
    | 'host'
    | 'config'
    | 'storageFull'
    | 'storageFencedAt'
    | 'storageCleanupUntil'
    | 'parentLsn'
    | 'parentAt'
  >
>;

/** True when the table lets a database in `from` make `move`. */
export function databaseMayMove(from: DatabaseRecordStatus, move: DatabaseMove): boolean {
  return (DATABASE_MOVES[move].from as readonly DatabaseRecordStatus[]).includes(from);
}
