/** Message patterns answered by pitr-worker (spec/decisions.md section 7). */
export const PITR_PATTERNS = {
  /** DatabaseRef -> PitrConfig; answers for a database that never had PITR too. */
  config: 'pitr.config',
  /** DatabaseRef & {retention_days} -> EnabledPitr: base backup taken, receiver `starting`. */
  enable: 'pitr.enable',
  /** DatabaseRef -> DisabledPitr: the receiver stops and its replication slot is dropped. */
  disable: 'pitr.disable',
  /** DatabaseRef & WalPageQuery -> WalArchivePage (completed segments, oldest first). */
  wal: 'pitr.wal',
  /** DatabaseRef -> RecoveryWindow. */
  recoveryWindow: 'pitr.recovery-window',
  /** DatabaseRef -> WalReceiverStatus. */
  receiverStatus: 'pitr.receiver-status',
  /** DatabaseRef -> WalReceiverStatus: a new receiver, with a new started_at and errors 0. */
  restartReceiver: 'pitr.restart-receiver',
  /** DatabaseRef & PitrRestoreDto -> CreatedPitrRestore: checks the target, asks the provisioner. */
  restore: 'pitr.restore',
  /** PitrPlanRequest -> RestorePlan: base backup, WAL segments and target (provisioner). */
  restorePlan: 'pitr.restore-plan',
  /** DatabaseIdRef -> {}: an in-place restore begins; the receiver stops (provisioner). */
  pauseForRestore: 'pitr.pause-for-restore',
  /** DatabaseIdRef -> {}: it ended; the receiver starts again, on a new archive if the data changed. */
  resumeAfterRestore: 'pitr.resume-after-restore',
  /** {database_ids} -> {keep_from}: per database, the time from which PITR needs its backups. */
  backupsInUse: 'pitr.backups-in-use',
  /** DatabaseIdRef -> {deleted: number}: the receiver stops and the WAL objects go (provisioner). */
  deleteForDatabase: 'pitr.delete-for-database',
} as const;
