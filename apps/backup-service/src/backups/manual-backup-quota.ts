import type { BackupStatus } from '@pgcloud/contracts';

/**
 * The manual backups the quota counts: those that hold or will hold an object. A failed
 * one holds none and is not what the user has to delete to make room, so it does not
 * count; automated backups never do.
 */
export const COUNTED_STATUSES: readonly BackupStatus[] = ['pending', 'running', 'completed'];
