import { rpc } from '../catalogue.js';
import {
  CheckRestoreRequest,
  CreateRestoreRequest,
  RestoreGetRequest,
  RestoreListRequest,
} from './restores.messages.js';
import type { CreatedRestore, Restore, RestoreList } from './restores.types.js';

/** Restore message patterns answered by database-provisioner, which runs every restore. */
export const RESTORE_PATTERNS = {
  /** Status pending; the database goes restoring. */
  create: rpc<CreateRestoreRequest, CreatedRestore>(
    'databases',
    'restores.create',
    CreateRestoreRequest,
    ['backup-service', 'pitr-worker'],
  ),
  /** A dry run of create: every check, nothing written; an estimate of its time. */
  check: rpc<CheckRestoreRequest, { estimated_seconds: number }>(
    'databases',
    'restores.check',
    CheckRestoreRequest,
    ['backup-service', 'pitr-worker'],
  ),
  /**
   * Stops a restore before `swapping` (docs/api/restores.md#cancel); RESTORE_NOT_CANCELLABLE
   * after. Answers it as it is once cancelled, or still stopping.
   */
  cancel: rpc<RestoreGetRequest, Restore>('databases', 'restores.cancel', RestoreGetRequest),
  /** Newest first (PITR routes: kind pitr). */
  list: rpc<RestoreListRequest, RestoreList>('databases', 'restores.list', RestoreListRequest),
  /** RESTORE_NOT_FOUND for one of another kind. */
  get: rpc<RestoreGetRequest, Restore>('databases', 'restores.get', RestoreGetRequest),
} as const;
