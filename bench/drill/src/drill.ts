// `npm run bench:drill`: the time a restore drill of the restore bench's database takes
// (its backup restored into a scratch server, checked with pg_amcheck, removed) beside a
// restore of the same backup into a new database, in the same run: every sample, the
// medians and their ratio. It only prints; nothing passes or fails on it.
import type { Client } from '@pgcloud/api-client';
import {
  createBackup,
  createDrill,
  createdRestore,
  deleteDatabase,
  getBackup,
  getDrill,
  getRestore,
  listDatabases,
  restoreBackup,
  unwrap,
} from '@pgcloud/api-client';
import type { Cleanup, DatabasePath, Samples } from '@pgcloud/bench-support';
import {
  benchCount,
  bulkDatabase,
  formatRatioOfMedians,
  formatSamples,
  pollUntil,
  runBench,
} from '@pgcloud/bench-support';

// As the restore bench: a data directory of about 1.2 GB, an archive of about 270 MB.
const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');

/** Seconds of a restore into a new database, start to completion; the database removed. */
async function timeRestoreInto(
  client: Client,
  path: DatabasePath,
  backupId: string,
  name: string,
): Promise<number> {
  const created = createdRestore(
    await unwrap(
      restoreBackup({
        client,
        path: { ...path, backup_id: backupId },
        body: { target_database: name },
      }),
    ),
  );
  const restore = await pollUntil(
    () => unwrap(getRestore({ client, path: { ...path, restore_id: created.restore_id } })),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restore.status === 'failed') throw new Error(`restore failed: ${restore.error ?? '?'}`);
  const project_id = path.project_id;
  await unwrap(deleteDatabase({ client, path: { project_id, name } }));
  // Gone before the next sample: its removal must not weigh on what comes next.
  await pollUntil(
    () => unwrap(listDatabases({ client, path: { project_id } })),
    (list) => !list.databases.some((d) => d.name === name),
  );
  return (Date.parse(restore.completed_at ?? '') - Date.parse(restore.started_at)) / 1000;
}

/** A drill's seconds, start to end, and its restore's alone (the checks after it not counted). */
async function timeDrill(
  client: Client,
  path: DatabasePath,
): Promise<{ total: number; restore: number }> {
  const created = await unwrap(createDrill({ client, path }));
  const drill = await pollUntil(
    () => unwrap(getDrill({ client, path: { ...path, drill_id: created.id } })),
    (d) => d.status === 'passed' || d.status === 'failed',
  );
  if (drill.status === 'failed') throw new Error(`drill failed: ${drill.error ?? '?'}`);
  return {
    total: (Date.parse(drill.completed_at ?? '') - Date.parse(drill.started_at)) / 1000,
    restore: drill.restore_seconds ?? 0,
  };
}

await runBench(async (cleanups: Cleanup[]) => {
  const runs = benchCount(3);
  if (!Number.isInteger(ROWS) || ROWS < 1)
    throw new Error(`BENCH_ROWS must be a whole number >= 1, not "${process.env['BENCH_ROWS']}"`);
  // One drill a sample: more than a Free account's manual drills of a day.
  const { client, path } = await bulkDatabase(cleanups, 'bench-drill', ROWS, {
    DRILL_DAILY_LIMIT_FREE: '1000',
  });
  console.error('taking a backup');
  const created = await unwrap(createBackup({ client, path }));
  const backup = await pollUntil(
    () => unwrap(getBackup({ client, path: { ...path, backup_id: created.id } })),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status !== 'completed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  const restores: number[] = [];
  const drills: { total: number; restore: number }[] = [];
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: a restore into a new database, then a drill`);
    restores.push(await timeRestoreInto(client, path, backup.id, `copy-${run}`));
    drills.push(await timeDrill(client, path));
  }
  const drill: Samples = { label: 'drill', values: drills.map((d) => d.total) };
  const restore: Samples = { label: 'restore into a new database', values: restores };
  const drillRestore: Samples = {
    label: "drill's restore alone (restore_seconds)",
    values: drills.map((d) => d.restore),
  };
  return [
    `restore drill of a ${(backup.size_bytes / 1e6).toFixed(0)} MB backup (zstd) of a database filled with ${ROWS} rows, ${runs} samples each, seconds`,
    '  drill: completed_at - started_at of a manual drill (download + SHA-256, recovery, TLS login, pg_amcheck of every database, the scratch server removed)',
    '  restore into a new database: completed_at - started_at of POST .../restore {target_database} (its server made, download + SHA-256, recovery, TLS checks, swap)',
    '',
    ...formatSamples([drill, drillRestore, restore]),
    '',
    formatRatioOfMedians(drill, restore, 1.2),
    formatRatioOfMedians(drillRestore, restore, 1.2),
  ].join('\n');
});
