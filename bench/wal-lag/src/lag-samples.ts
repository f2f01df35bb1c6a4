import { setTimeout as delay } from 'node:timers/promises';
import type { EnabledPitr, RecoveryWindow, WalReceiverStatus } from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { apiData } from '@pgcloud/testing';

// The base backup of a small database and the receiver's first connection take seconds.
const ARCHIVE_TIMEOUT_MS = 5 * 60_000;

/** One reading of the archive's lag, taken while the write load runs. */
export interface LagSample {
  /** receiver-status `lag_seconds`: now - recovery window `to`, rounded down. */
  lagSeconds: number;
  /** Our clock when both answers were in, minus recovery window `to`, in milliseconds. */
  behindMs: number;
  /** receiver-status `bytes_received`: WAL archived since the receiver started. */
  bytesReceived: number;
  /** When the answers were in (Date.now()). */
  at: number;
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
  await waitForArchive(
    api,
    pitrPath,
    'the archive to open',
    ({ status, window }) => status.status === 'running' && window.to !== null,
  );
  return enabled;
}

/** Waits until the archive holds everything written so far: `to` passes the present. */
export async function waitForCatchUp(api: ApiClient, pitrPath: string): Promise<void> {
  const now = Date.now();
  await waitForArchive(
    api,
    pitrPath,
    'the archive to catch up',
    ({ window }) => window.to !== null && Date.parse(window.to) > now,
  );
}

/** One sample; the clock is read after both answers, so the lag is never understated. */
async function sampleLag(api: ApiClient, pitrPath: string): Promise<LagSample> {
  const { status, window } = await readArchive(api, pitrPath);
  const at = Date.now();
  if (window.to === null) throw new Error('the recovery window closed during the load');
  return {
    lagSeconds: status.lag_seconds,
    behindMs: at - Date.parse(window.to),
    bytesReceived: status.bytes_received,
    at,
  };
}

/** Samples once a second until `load` settles; answers the samples and the load's result. */
export async function sampleDuring<T>(
  api: ApiClient,
  pitrPath: string,
  load: Promise<T>,
): Promise<{ samples: LagSample[]; result: T }> {
  let settled = false;
  const watched = load.finally(() => {
    settled = true;
  });
  const samples: LagSample[] = [];
  try {
    for (let next = Date.now(); !settled; next += 1000) {
      samples.push(await sampleLag(api, pitrPath));
      await delay(Math.max(0, next + 1000 - Date.now()));
    }
  } finally {
    // A failed sample must not leave the load's rejection unhandled.
    await watched.catch(() => undefined);
  }
  return { samples, result: await watched };
}

async function waitForArchive(
  api: ApiClient,
  pitrPath: string,
  what: string,
  done: (archive: { status: WalReceiverStatus; window: RecoveryWindow }) => boolean,
): Promise<void> {
  const deadline = Date.now() + ARCHIVE_TIMEOUT_MS;
  for (;;) {
    const archive = await readArchive(api, pitrPath);
    if (done(archive)) return;
    if (Date.now() > deadline)
      throw new Error(`waited in vain for ${what}: ${JSON.stringify(archive)}`);
    await delay(250);
  }
}

async function readArchive(
  api: ApiClient,
  pitrPath: string,
): Promise<{ status: WalReceiverStatus; window: RecoveryWindow }> {
  const [status, window] = await Promise.all([
    api.get(`${pitrPath}/receiver-status`),
    api.get(`${pitrPath}/recovery-window`),
  ]);
  return {
    status: apiData<WalReceiverStatus>(status, 200, 'GET pitr/receiver-status'),
    window: apiData<RecoveryWindow>(window, 200, 'GET pitr/recovery-window'),
  };
}
