import type { PitrConfig, RecoveryWindow, WalReceiverStatus } from '@pgcloud/contracts';
import type { ArchiveEntity } from './archive.entity.js';

/** GET pitr/config; a database that never had PITR answers nulls (docs/api/pitr.md#configuration). */
export function toConfig(archive: ArchiveEntity | null, window: RecoveryWindow | null): PitrConfig {
  if (!archive)
    return { enabled: false, base_backup_id: null, retention_days: null, recovery_window: null };
  return {
    enabled: archive.enabled,
    base_backup_id: archive.baseBackupId,
    retention_days: archive.retentionDays,
    recovery_window:
      archive.enabled && window?.from && window.to ? { from: window.from, to: window.to } : null,
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
