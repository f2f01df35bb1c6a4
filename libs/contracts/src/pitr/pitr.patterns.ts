import { rpc } from '../catalogue.js';
import {
  DatabaseIdRef,
  DatabaseRef,
  RestorePointRequest,
} from '../databases/databases.messages.js';
import type { RestoreDryRun, RestorePlan } from '../restores/restores.types.js';
import {
  DatabaseIdsRequest,
  EnablePitrRequest,
  PitrPlanRequest,
  PitrRestoreRequest,
  WalPageRequest,
} from './pitr.messages.js';
import type {
  BackupsInUse,
  CreatedPitrRestore,
  DisabledPitr,
  EnabledPitr,
  PitrConfig,
  RecoveryWindow,
  RestorePoint,
  RestorePointList,
  WalArchivePage,
  WalReceiverStatus,
} from './pitr.types.js';

/** Message patterns answered by pitr-worker (docs/api/pitr.md). */
export const PITR_PATTERNS = {
  /** Answers for a database that never had PITR too. */
  config: rpc<DatabaseRef, PitrConfig>('pitr', 'pitr.config', DatabaseRef),
  /** Base backup taken, receiver `starting`. */
  enable: rpc<EnablePitrRequest, EnabledPitr>('pitr', 'pitr.enable', EnablePitrRequest),
  /** The receiver stops and its replication slot is dropped. */
  disable: rpc<DatabaseRef, DisabledPitr>('pitr', 'pitr.disable', DatabaseRef),
  /** Completed segments, oldest first. */
  wal: rpc<WalPageRequest, WalArchivePage>('pitr', 'pitr.wal', WalPageRequest),
  recoveryWindow: rpc<DatabaseRef, RecoveryWindow>('pitr', 'pitr.recovery-window', DatabaseRef),
  receiverStatus: rpc<DatabaseRef, WalReceiverStatus>('pitr', 'pitr.receiver-status', DatabaseRef),
  /** A new receiver, with a new started_at and errors 0. */
  restartReceiver: rpc<DatabaseRef, WalReceiverStatus>(
    'pitr',
    'pitr.restart-receiver',
    DatabaseRef,
  ),
  /** Checks the target, asks the provisioner (which asks here for a branch at a point). */
  restore: rpc<PitrRestoreRequest, CreatedPitrRestore>('pitr', 'pitr.restore', PitrRestoreRequest, [
    'api-gateway',
    'database-provisioner',
  ]),
  /** A restore point of the current archive, written by the server (201). */
  createRestorePoint: rpc<RestorePointRequest, RestorePoint>(
    'pitr',
    'pitr.create-restore-point',
    RestorePointRequest,
  ),
  /** The current archive's restore points, oldest first. */
  restorePoints: rpc<DatabaseRef, RestorePointList>('pitr', 'pitr.restore-points', DatabaseRef),
  /** The same checks as restore, and what it would do; nothing is created. */
  planRestore: rpc<PitrRestoreRequest, RestoreDryRun>(
    'pitr',
    'pitr.plan-restore',
    PitrRestoreRequest,
  ),
  /** Base backup, WAL segments and target (provisioner). */
  restorePlan: rpc<PitrPlanRequest, RestorePlan>('pitr', 'pitr.restore-plan', PitrPlanRequest, [
    'database-provisioner',
  ]),
  /** An in-place restore begins; the receiver stops (provisioner). */
  pauseForRestore: rpc<DatabaseIdRef, object>('pitr', 'pitr.pause-for-restore', DatabaseIdRef, [
    'database-provisioner',
  ]),
  /** Per database, the time from which PITR needs its backups. */
  backupsInUse: rpc<DatabaseIdsRequest, BackupsInUse>(
    'pitr',
    'pitr.backups-in-use',
    DatabaseIdsRequest,
    ['backup-service'],
  ),
} as const;
