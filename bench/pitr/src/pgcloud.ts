import { setTimeout as delay } from 'node:timers/promises';
// pgcloud's side of bench:pitr: PITR enabled, the recovery window waited for, the plan of
// a restore (dry run), and a restore into a new database with the rows it holds.
import type { Client, EnabledPitr, RecoveryWindow, RestorePlanSummary } from '@pgcloud/api-client';
import {
  createdRestore,
  deleteDatabase,
  enablePitr,
  getDatabaseUrl,
  getPitrRestore,
  getReceiverStatus,
  getRecoveryWindow,
  isDryRun,
  listDatabases,
  restorePitr,
  unwrap,
} from '@pgcloud/api-client';
import type { DatabasePath } from '@pgcloud/bench-support';
import { pollUntil } from '@pgcloud/bench-support';
import { RESTORED_SQL, connect } from './wal-writes.js';

// Archiving a few gigabytes of WAL into the local S3 can trail the writes by minutes.
const ARCHIVE_TIMEOUT_MS = 15 * 60_000;

/** What a PITR restore took, as its record tells. */
export interface OurRestore {
  /** started_at, in ms since the epoch: its phases follow from there. */
  startedAtMs: number;
  /** completed_at - started_at. */
  seconds: number;
  walFilesApplied: number;
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
  await waitForArchive(client, path, 'the archive to open', async (window) => {
    const status = await unwrap(getReceiverStatus({ client, path }));
    return status.status === 'running' && window.to !== null;
  });
  return enabled;
}

/** Waits until the recovery window's `to` is past `moment`, and answers that window. */
export function windowPast(
  client: Client,
  path: DatabasePath,
  moment: Date,
): Promise<RecoveryWindow & { to: string }> {
  return waitForArchive(
    client,
    path,
    `the recovery window to pass ${moment.toISOString()}`,
    (window) => Promise.resolve(window.to !== null && Date.parse(window.to) > moment.getTime()),
  );
}

/** What pgcloud would do to restore to `targetTime` (`?dry_run=true`): its base and its WAL. */
export async function planOf(
  client: Client,
  path: DatabasePath,
  targetTime: string,
): Promise<RestorePlanSummary> {
  const answer = await unwrap(
    restorePitr({
      client,
      path,
      query: { dry_run: true },
      body: { target_time: targetTime, target_database: 'pitr-plan' },
    }),
  );
  if (!isDryRun(answer)) throw new Error('the dry run answered a restore');
  return answer.plan;
}

/**
 * What the restored database `name` answers to RESTORED_SQL, over its TLS connection
 * string; then it is deleted, and gone before this answers, so its removal does not weigh
 * on the next sample.
 */
export async function answerAndDelete(
  client: Client,
  projectId: string,
  name: string,
  caPem: string,
): Promise<string> {
  const path = { project_id: projectId, name };
  try {
    const details = await unwrap(getDatabaseUrl({ client, path }));
    const session = await connect(details.connection_string, caPem);
    try {
      const { rows } = await session.query<{ answer: string }>(`${RESTORED_SQL} AS answer`);
      return rows[0]?.answer ?? '';
    } finally {
      await session.end();
    }
  } finally {
    await unwrap(deleteDatabase({ client, path }));
    await pollUntil(
      () => unwrap(listDatabases({ client, path: { project_id: projectId } })),
      (list) => !list.databases.some((d) => d.name === name),
    );
  }
}

/** A PITR restore into a new database `targetDatabase`, run to its end. */
export async function restoreOurs(
  client: Client,
  path: DatabasePath,
  targetTime: string,
  targetDatabase: string,
): Promise<OurRestore> {
  const created = createdRestore(
    await unwrap(
      restorePitr({
        client,
        path,
        body: { target_time: targetTime, target_database: targetDatabase },
      }),
    ),
  );
  const restorePath = { ...path, restore_id: created.restore_id };
  const restore = await pollUntil(
    () => unwrap(getPitrRestore({ client, path: restorePath })),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restore.status === 'failed') throw new Error(`PITR restore failed: ${restore.error ?? '?'}`);
  const startedAtMs = Date.parse(restore.started_at);
  return {
    startedAtMs,
    seconds: (Date.parse(restore.completed_at ?? '') - startedAtMs) / 1000,
    walFilesApplied: restore.wal_files_applied ?? Number.NaN,
  };
}

async function waitForArchive(
  client: Client,
  path: DatabasePath,
  what: string,
  done: (window: RecoveryWindow) => Promise<boolean>,
): Promise<RecoveryWindow & { to: string }> {
  const deadline = Date.now() + ARCHIVE_TIMEOUT_MS;
  for (;;) {
    const window = await unwrap(getRecoveryWindow({ client, path }));
    if (window.to !== null && (await done(window))) return { ...window, to: window.to };
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await delay(250);
  }
}
