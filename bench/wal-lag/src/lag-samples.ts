import { setTimeout as delay } from 'node:timers/promises';
import type { Client, EnabledPitr, RecoveryWindow, WalReceiverStatus } from '@pgcloud/api-client';
import { enablePitr, getReceiverStatus, getRecoveryWindow, unwrap } from '@pgcloud/api-client';
import type { DatabasePath } from '@pgcloud/bench-support';

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
export async function enablePitrAndWait(
  client: Client,
  path: DatabasePath,
  retentionDays: number,
): Promise<EnabledPitr> {
  const enabled = await unwrap(
    enablePitr({ client, path, body: { retention_days: retentionDays } }),
  );
  await waitForArchive(
    client,
    path,
    'the archive to open',
    ({ status, window }) => status.status === 'running' && window.to !== null,
  );
  return enabled;
}

/** Waits until the archive holds everything written so far: `to` passes the present. */
export async function waitForCatchUp(client: Client, path: DatabasePath): Promise<void> {
  const now = Date.now();
  await waitForArchive(
    client,
    path,
    'the archive to catch up',
    ({ window }) => window.to !== null && Date.parse(window.to) > now,
  );
}

/** One sample; the clock is read after both answers, so the lag is never understated. */
async function sampleLag(client: Client, path: DatabasePath): Promise<LagSample> {
  const { status, window } = await readArchive(client, path);
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
  client: Client,
  path: DatabasePath,
  load: Promise<T>,
): Promise<{ samples: LagSample[]; result: T }> {
  let settled = false;
  const watched = load.finally(() => {
    settled = true;
  });
  const samples: LagSample[] = [];
  try {
    for (let next = Date.now(); !settled; next += 1000) {
      samples.push(await sampleLag(client, path));
      await delay(Math.max(0, next + 1000 - Date.now()));
    }
  } finally {
    // A failed sample must not leave the load's rejection unhandled.
    await watched.catch(() => undefined);
  }
  return { samples, result: await watched };
}

async function waitForArchive(
  client: Client,
  path: DatabasePath,
  what: string,
  done: (archive: { status: WalReceiverStatus; window: RecoveryWindow }) => boolean,
): Promise<void> {
  const deadline = Date.now() + ARCHIVE_TIMEOUT_MS;
  for (;;) {
    const archive = await readArchive(client, path);
    if (done(archive)) return;
    if (Date.now() > deadline)
      throw new Error(`waited in vain for ${what}: ${JSON.stringify(archive)}`);
    await delay(250);
  }
}

async function readArchive(
  client: Client,
  path: DatabasePath,
): Promise<{ status: WalReceiverStatus; window: RecoveryWindow }> {
  const [status, window] = await Promise.all([
    unwrap(getReceiverStatus({ client, path })),
    unwrap(getRecoveryWindow({ client, path })),
  ]);
  return { status, window };
}
