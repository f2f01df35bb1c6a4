import type { PitrTargetFields, RequestContext, RestorePlan } from '@pgcloud/contracts';
import { BACKUP_PATTERNS, DomainError, PITR_PATTERNS } from '@pgcloud/contracts';
import { PermanentJobError } from '@pgcloud/jobs';
import type { RpcClient } from '@pgcloud/messaging';
import { parseSegmentName } from '@pgcloud/postgres';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecoveryTarget, RestoreRecovery } from '../drivers/database-driver.js';
import { checkedRecoveryTarget } from '../drivers/restore-build/recovery.js';
import type { RestoreEntity } from './restore.entity.js';

/** The kind of PermanentJobError a restore without a plan fails with. */
export const NO_PLAN = 'no-plan';
// How long a PITR restore waits for the archive to reach its target (`latest` just asked).
const ARCHIVE_CATCH_UP_MS = 120_000;

/**
 * A fresh plan from the service that owns what is restored: backup-service for a
 * backup, pitr-worker for a point in time (which answers OPERATION_IN_PROGRESS until its
 * archive reaches the target). A plan it refuses (deleted, out of the window) cannot be
 * retried.
 */
export async function planOf(
  rpc: RpcClient,
  ctx: RequestContext,
  restore: RestoreEntity,
): Promise<RestorePlan> {
  const deadline = Date.now() + ARCHIVE_CATCH_UP_MS;
  for (;;) {
    try {
      return restore.kind === 'pitr'
        ? await rpc.call(PITR_PATTERNS.restorePlan, ctx, {
            database_id: restore.databaseId,
            ...pitrTarget(restore),
          })
        : await rpc.call(BACKUP_PATTERNS.restorePlan, ctx, {
            backup_id: restore.backupId ?? '',
            database_id: restore.databaseId,
          });
    } catch (err) {
      // Not answering (a restart, an outage) is not a refusal: the job retries.
      if (!(err instanceof DomainError) || err.code === 'SERVICE_UNAVAILABLE') throw err;
      if (err.code !== 'OPERATION_IN_PROGRESS' || Date.now() > deadline)
        throw new PermanentJobError(`no plan: ${err.message}`, NO_PLAN);
      await sleep(1000);
    }
  }
}

/**
 * Fails a plan with a link that is not to the object store at `origin` (the origin of
 * S3_ENDPOINT): a plan comes from another service, and the provisioner downloads from no
 * other place, whatever a plan says (PermanentJobError, before anything is written).
 */
export function assertLinksAt(plan: RestorePlan, origin: string): void {
  const links = [plan.base_backup_url, ...(plan.wal_segments ?? []).flatMap((w) => w.urls)];
  for (const link of links) {
    let url: URL | undefined;
    try {
      url = new URL(link);
    } catch {
      url = undefined;
    }
    if (url?.origin !== origin)
      throw new PermanentJobError(
        `no plan: a link of the plan is not to the object store (${origin})`,
        NO_PLAN,
      );
  }
}

/** What a PITR restore's record says it stops at, as pitr-worker is asked for its plan. */
function pitrTarget(restore: RestoreEntity): PitrTargetFields {
  if (restore.targetLsn) return { target_lsn: restore.targetLsn };
  if (restore.targetRestorePoint) return { target_restore_point: restore.targetRestorePoint };
  return { target_time: restore.targetTime ?? '' };
}

/**
 * A PITR plan's replay: its segments, up to its target; none for a backup's plan. The
 * target and the segments' names come from another service and reach a command line and
 * file names here: each is checked by its own grammar first, and a plan that breaks one
 * cannot be restored (PermanentJobError), before anything is written.
 */
export function recoveryOf(plan: RestorePlan): { recovery?: RestoreRecovery } {
  const target: RecoveryTarget | undefined = plan.target_lsn
    ? { lsn: plan.target_lsn }
    : plan.target_restore_point
      ? { restorePoint: plan.target_restore_point }
      : plan.target_time
        ? { time: plan.target_time }
        : undefined;
  if (!plan.wal_segments || !target) return {};
  try {
    checkedRecoveryTarget(target);
  } catch (err) {
    throw new PermanentJobError(`no plan: ${(err as Error).message}`, NO_PLAN);
  }
  const segments = plan.wal_segments.map((w) => {
    if (!parseSegmentName(w.name))
      throw new PermanentJobError(`no plan: not a WAL segment name: ${w.name}`, NO_PLAN);
    return {
      name: w.name,
      urls: w.urls,
      partial: w.partial,
      sizeBytes: w.size_bytes,
      ...(w.etags ? { etags: w.etags } : {}),
      ...(w.compression === 'zstd' ? { compression: w.compression } : {}),
    };
  });
  return { recovery: { segments, target } };
}
