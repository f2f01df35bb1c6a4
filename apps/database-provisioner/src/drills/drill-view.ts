import type { Drill } from '@pgcloud/contracts';
import type { DrillEntity } from './drill.entity.js';

/** A drill as the API shows it: fields that do not apply are left out. */
export function toDrill(record: DrillEntity): Drill {
  const drill: Drill = {
    id: record.id,
    kind: record.kind,
    status: record.status,
    phase: record.phase,
    backup_id: record.backupId,
    checks: record.checks,
    started_at: record.startedAt.toISOString(),
  };
  if (record.targetTime) drill.target_time = record.targetTime;
  if (record.targetLsn) drill.target_lsn = record.targetLsn;
  if (record.restoreSeconds !== null) drill.restore_seconds = record.restoreSeconds;
  if (record.completedAt) drill.completed_at = record.completedAt.toISOString();
  if (record.status === 'failed' && record.error) drill.error = record.error;
  return drill;
}
