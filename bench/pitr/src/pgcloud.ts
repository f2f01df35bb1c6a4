import { setTimeout as delay } from 'node:timers/promises';
import type {
  CreatedPitrRestore,
  EnabledPitr,
  RecoveryWindow,
  Restore,
  WalReceiverStatus,
} from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { apiData, pollUntil } from '@pgcloud/testing';

// Archiving a gigabyte of WAL into the local S3 can trail the writes by minutes.
const ARCHIVE_TIMEOUT_MS = 15 * 60_000;

/** What a PITR restore took, as its record tells. */
export interface OurRestore {
  /** completed_at - started_at. */
  seconds: number;
  walFilesApplied: number;
}

/**
 * Enables PITR and waits until the receiver streams and the recovery window is open (the
 * base backup taken on enabling has completed).
 */
export async function enablePitr(
  api: ApiClient,
  pitrPath: string,
  retentionDays: number,
): Promise<EnabledPitr> {
  const enabled = apiData<EnabledPitr>(
    await api.post(`${pitrPath}/enable`, { retention_days: retentionDays }),
    200,
    'POST pitr/enable',
  );
  await waitForArchive(api, pitrPath, 'the archive to open', async (window) => {
    const status = apiData<WalReceiverStatus>(
      await api.get(`${pitrPath}/receiver-status`),
      200,
      'GET pitr/receiver-status',
    );
    return status.status === 'running' && window.to !== null;
  });
  return enabled;
}

/** Waits until the recovery window's `to` is past `moment`, and answers that window. */
export function windowPast(
  api: ApiClient,
  pitrPath: string,
  moment: Date,
): Promise<RecoveryWindow & { to: string }> {
  return waitForArchive(
    api,
    pitrPath,
    `the recovery window to pass ${moment.toISOString()}`,
    (window) => Promise.resolve(window.to !== null && Date.parse(window.to) > moment.getTime()),
  );
}

/** A PITR restore into a new database `targetDatabase`, run to its end. */
export async function restoreOurs(
  api: ApiClient,
  pitrPath: string,
  targetTime: string,
  targetDatabase: string,
): Promise<OurRestore> {
  const created = apiData<CreatedPitrRestore>(
    await api.post(`${pitrPath}/restore`, {
      target_time: targetTime,
      target_database: targetDatabase,
    }),
    201,
    'POST pitr/restore',
  );
  const restore = await pollUntil(
    async () =>
      apiData<Restore>(
        await api.get(`${pitrPath}/restores/${created.restore_id}`),
        200,
        'GET pitr/restores/{id}',
      ),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restore.status === 'failed') throw new Error(`PITR restore failed: ${restore.error ?? '?'}`);
  return {
    seconds: (Date.parse(restore.completed_at ?? '') - Date.parse(restore.started_at)) / 1000,
    walFilesApplied: restore.wal_files_applied ?? Number.NaN,
  };
}

async function waitForArchive(
  api: ApiClient,
  pitrPath: string,
  what: string,
  done: (window: RecoveryWindow) => Promise<boolean>,
): Promise<RecoveryWindow & { to: string }> {
  const deadline = Date.now() + ARCHIVE_TIMEOUT_MS;
  for (;;) {
    const window = apiData<RecoveryWindow>(
      await api.get(`${pitrPath}/recovery-window`),
      200,
      'GET pitr/recovery-window',
    );
    if (window.to !== null && (await done(window))) return { ...window, to: window.to };
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await delay(250);
  }
}
