import { rpc } from '../catalogue.js';
import { DatabaseIdRef, DatabaseRef } from '../databases/databases.messages.js';
import { DatabaseIdsRequest } from '../pitr/pitr.messages.js';
import type { Deleted } from '../projects/projects.types.js';
import type { CreatedRestore, RestoreDryRun, RestorePlan } from '../restores/restores.types.js';
import { BackupPlanRequest, BackupRef, BackupRestoreRequest } from './backups.messages.js';
import type {
  ArchiveBackup,
  Backup,
  BackupList,
  CreatedBackup,
  DownloadLink,
} from './backups.types.js';

/** Message patterns answered by backup-service. */
export const BACKUP_PATTERNS = {
  /** Newest first. */
  list: rpc<DatabaseRef, BackupList>('backups', 'backups.list', DatabaseRef),
  /** Status pending; needs the database running. */
  create: rpc<DatabaseRef, CreatedBackup>('backups', 'backups.create', DatabaseRef),
  get: rpc<BackupRef, Backup>('backups', 'backups.get', BackupRef),
  /** Needs status completed. */
  download: rpc<BackupRef, DownloadLink>('backups', 'backups.download', BackupRef),
  /** The object goes first, then the record. */
  delete: rpc<BackupRef, Deleted>('backups', 'backups.delete', BackupRef),
  /** An automated base backup for PITR's archive (pitr-worker). */
  takeBase: rpc<DatabaseRef, { backup_id: string }>('backups', 'backups.take-base', DatabaseRef, [
    'pitr-worker',
  ]),
  /** What PITR's window is built on (pitr-worker). */
  forArchive: rpc<DatabaseIdRef, { backups: ArchiveBackup[] }>(
    'backups',
    'backups.for-archive',
    DatabaseIdRef,
    ['pitr-worker'],
  ),
  /** Checks the backup, asks the provisioner to restore it. */
  restore: rpc<BackupRestoreRequest, CreatedRestore>(
    'backups',
    'backups.restore',
    BackupRestoreRequest,
  ),
  /** The same checks as restore, and what it would do; nothing is created. */
  planRestore: rpc<BackupRestoreRequest, RestoreDryRun>(
    'backups',
    'backups.plan-restore',
    BackupRestoreRequest,
  ),
  /** A fresh download link for a completed backup (provisioner). */
  restorePlan: rpc<BackupPlanRequest, RestorePlan>(
    'backups',
    'backups.restore-plan',
    BackupPlanRequest,
    ['database-provisioner', 'pitr-worker'],
  ),
  /** Which of these databases have a completed backup (the provisioner's drill schedule). */
  withCompletedBackup: rpc<DatabaseIdsRequest, { database_ids: string[] }>(
    'backups',
    'backups.with-completed',
    DatabaseIdsRequest,
    ['database-provisioner'],
  ),
} as const;
