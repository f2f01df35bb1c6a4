import type { DrillCheck, RequestContext, RestorePlan } from '@pgcloud/contracts';
import {
  BACKUP_PATTERNS,
  DomainError,
  PITR_PATTERNS,
  fromMicros,
  microsOf,
} from '@pgcloud/contracts';
import type { RpcClient } from '@pgcloud/messaging';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RestoreRecovery } from '../drivers/database-driver.js';
import { assertLinksAt, recoveryOf } from '../restores/restore-plan.js';

const RETRIED: readonly string[] = ['SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'];
// How long a drill waits for the archive to reach the moment it replays to.
const ARCHIVE_CATCH_UP_MS = 120_000;

/** What a drill restores, or the check that failed before anything could be. */
export type DrillPlan =
  { plan: RestorePlan; recovery?: RestoreRecovery; targetTime?: string } | { failed: DrillCheck };

/**
 * What a drill restores (docs/api/drills.md#what-a-drill-restores): with PITR, the archive
 * replayed to now from the newest base backup before it, once the archive holds now; without
 * (or before the archive's first base backup), the newest completed backup. A PITR plan
 * refused for any other reason, or an archive that does not catch up, fails `wal_chain`;
 * no completed backup fails `consistent`. A service that does not answer throws (the job
 * retries). Links to anywhere but `objectStoreOrigin` are refused as a restore refuses them.
 */
export async function drillPlanOf(
  rpc: RpcClient,
  ctx: RequestContext,
  databaseId: string,
  objectStoreOrigin: string,
  catchUpMs = ARCHIVE_CATCH_UP_MS,
): Promise<DrillPlan> {
  const target = fromMicros(microsOf(new Date())).iso;
  const deadline = Date.now() + catchUpMs;
  for (;;) {
    try {
      const plan = await rpc.call(PITR_PATTERNS.restorePlan, ctx, {
        database_id: databaseId,
        target_time: target,
      });
      assertLinksAt(plan, objectStoreOrigin);
      return { plan, ...recoveryOf(plan), targetTime: target };
    } catch (err) {
      // Not answering, or failing unexpectedly (INTERNAL_ERROR): the job tries again.
      if (!(err instanceof DomainError) || RETRIED.includes(err.code)) throw err;
      if (err.code === 'PITR_NOT_ENABLED' || err.code === 'TARGET_TIME_INVALID') break;
      if (err.code !== 'OPERATION_IN_PROGRESS' || Date.now() > deadline)
        return { failed: { name: 'wal_chain', passed: false, detail: err.message } };
      await sleep(1000);
    }
  }
  try {
    const plan = await rpc.call(BACKUP_PATTERNS.restorePlan, ctx, { database_id: databaseId });
    assertLinksAt(plan, objectStoreOrigin);
    return { plan };
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== 'BACKUP_NOT_FOUND') throw err;
    return {
      failed: { name: 'consistent', passed: false, detail: 'the database has no completed backup' },
    };
  }
}
