/** Message patterns answered by backup-service. */
export const BACKUP_PATTERNS = {
  /** DatabaseRef -> {backups: Backup[]}, newest first. */
  list: 'backups.list',
  /** DatabaseRef -> CreatedBackup (status pending); needs the database running. */
  create: 'backups.create',
  /** BackupRef -> Backup. */
  get: 'backups.get',
  /** BackupRef -> DownloadLink (needs status completed). */
  download: 'backups.download',
  /** BackupRef -> Deleted: the object goes first, then the record. */
  delete: 'backups.delete',
  /** DatabaseIdRef -> {deleted: number}: every backup of a removed database (provisioner). */
  deleteForDatabase: 'backups.delete-for-database',
  /** DatabaseRef -> {backup_id}: an automated base backup for PITR's archive (pitr-worker). */
  takeBase: 'backups.take-base',
  /** DatabaseIdRef -> {backups: ArchiveBackup[]}: what PITR's window is built on (pitr-worker). */
  forArchive: 'backups.for-archive',
} as const;
