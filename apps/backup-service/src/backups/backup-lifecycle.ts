import type { BackupStatus } from '@pgcloud/contracts';
import type { BackupEntity } from './backup.entity.js';

/**
 * A backup's life (docs/api/backups.md#its-life): the moves its status makes, and from
 * where. Every write of a backup's `status` goes through this table, by
 * BackupsRepository.move in the caller's transaction; a move the table does not hold is
 * refused before any SQL.
 */
export const BACKUP_MOVES = {
  /** A job attempt takes it up. */
  start: { from: ['pending'], to: 'running' },
  /** Uploaded whole, its checksum and WAL range recorded. */
  complete: { from: ['running'], to: 'completed' },
  /** The job failed for good. */
  fail: { from: ['pending', 'running'], to: 'failed' },
} as const satisfies Record<string, { from: readonly BackupStatus[]; to: BackupStatus }>;

export type BackupMove = keyof typeof BACKUP_MOVES;

/** Where every backup begins. */
export const BACKUP_BEGINS = { status: 'pending' } as const;

/** What a move writes besides the status. */
export type BackupMoveFields = Partial<
  Pick<
    BackupEntity,
    | 'startedAt'
    | 'completedAt'
    | 'error'
    | 'sizeBytes'
    | 'checksumSha256'
    | 'startLsn'
    | 'endLsn'
    | 'timeline'
  >
>;

/** True when the table lets a backup in `from` make `move`. */
export function backupMayMove(from: BackupStatus, move: BackupMove): boolean {
  return (BACKUP_MOVES[move].from as readonly BackupStatus[]).includes(from);
}
