import type {
  ArchiveHealth,
  PitrConfig,
  RecoveryWindow,
  WalReceiverStatus,
} from '@pgcloud/contracts';
import type { ArchiveEntity } from './archive.entity.js';

/** GET pitr/config; a database that never had PITR answers nulls (docs/api/pitr.md#configuration). */
export function toConfig(archive: ArchiveEntity | null, window: RecoveryWindow | null): PitrConfig {
  if (!archive)
    return { enabled: false, base_backup_id: null, retention_days: null, recovery_window: null };
  const config: PitrConfig = {
    enabled: archive.enabled,
    base_backup_id: archive.baseBackupId,
    retention_days: archive.retentionDays,
    recovery_window:
      archive.enabled && window?.from && window.to ? { from: window.from, to: window.to } : null,
  };
  return archive.enabled ? { ...config, archive: toArchiveHealth(archive) } : config;
}

/** What the last check of the archive in the object store found; null before the first. */
export function toArchiveHealth(archive: ArchiveEntity): ArchiveHealth | null {
  if (!archive.archiveState || !archive.archiveCheckedAt) return null;
  const newest = archive.newestObjectAt;
  const checkedAt = archive.archiveCheckedAt;
  return {
    state: archive.archiveState,
    newest_object_at: newest?.toISOString() ?? null,
    lag_seconds: newest
      ? Math.max(0, Math.floor((checkedAt.getTime() - newest.getTime()) / 1000))
      : 0,
    checked_at: checkedAt.toISOString(),
    ...(archive.archiveProblem ? { problem: archive.archiveProblem } : {}),
  };
}

/** GET pitr/receiver-status: lag_seconds is now - `to`, rounded down. */
export function toReceiverStatus(archive: ArchiveEntity, now: Date): WalReceiverStatus {
  const to = archive.windowTo ?? archive.enabledAt;
  // No replica holds it (all gone, or the holder died and none took over yet): whatever
  // it last wrote, it is not streaming now.
  const held = archive.leaseExpiresAt !== null && archive.leaseExpiresAt > now;
  const status =
    archive.receiverStatus === 'running' && !held ? 'starting' : archive.receiverStatus;
  return {
    status,
    started_at: archive.receiverStartedAt.toISOString(),
    last_wal_file: archive.lastWalFile,
    bytes_received: archive.bytesReceived,
    errors: archive.receiverErrors,
    lag_seconds: Math.max(0, Math.floor((now.getTime() - to.getTime()) / 1000)),
  };
}
