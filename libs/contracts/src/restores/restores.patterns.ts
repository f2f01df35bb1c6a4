/** Restore message patterns answered by database-provisioner, which runs every restore. */
export const RESTORE_PATTERNS = {
  /** CreateRestoreRequest -> CreatedRestore (status pending); the database goes restoring. */
  create: 'restores.create',
  /** DatabaseRef & {kind?} -> {restores: Restore[]}, newest first (PITR routes: kind pitr). */
  list: 'restores.list',
  /** RestoreRef & {kind?} -> Restore; RESTORE_NOT_FOUND for one of another kind. */
  get: 'restores.get',
} as const;

/** Restore message patterns answered by backup-service. */
export const BACKUP_RESTORE_PATTERNS = {
  /** BackupRef & RestoreOptions -> CreatedRestore: checks the backup, asks the provisioner. */
  restore: 'backups.restore',
  /** {backup_id} -> RestorePlan: a fresh download link for a completed backup (provisioner). */
  plan: 'backups.restore-plan',
} as const;
