// `npm run bench:restore`: the time pgcloud takes to restore a backup of a database of
// at least 500 MB in place (download with its checksum, extract, recovery, promotion, a
// TLS check, the swap), beside extracting the same archive and starting PostgreSQL on it
// by hand, in the same run, and the ratio. It only prints; nothing passes or fails on it.
import { performance } from 'node:perf_hooks';
import type { Client } from '@pgcloud/api-client';
import {
  createBackup,
  createdRestore,
  getBackup,
  getBackupDownload,
  getRestore,
  restoreBackup,
  unwrap,
} from '@pgcloud/api-client';
import type { Cleanup, DatabasePath } from '@pgcloud/testing';
import {
  RestoredByHand,
  benchCount,
  bulkDatabase,
  downloadArchive,
  middle,
  pollUntil,
  runBench,
} from '@pgcloud/testing';

const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');

/** Seconds of one in-place restore: from the record's start to its completion. */
async function timeOurs(client: Client, path: DatabasePath, backupId: string): Promise<number> {
  const created = createdRestore(
    await unwrap(restoreBackup({ client, path: { ...path, backup_id: backupId }, body: {} })),
  );
  const restore = await pollUntil(
    () => unwrap(getRestore({ client, path: { ...path, restore_id: created.restore_id } })),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restore.status === 'failed') throw new Error(`restore failed: ${restore.error ?? '?'}`);
  return (Date.parse(restore.completed_at ?? '') - Date.parse(restore.started_at)) / 1000;
}

/** Seconds to extract the archive and start PostgreSQL on it (crash recovery included). */
async function timeByHand(archive: string, parent: string): Promise<number> {
  const started = performance.now();
  const restored = await RestoredByHand.extract(archive, parent);
  try {
    await restored.start();
    return (performance.now() - started) / 1000;
  } finally {
    await restored.remove();
  }
}

await runBench(async (cleanups: Cleanup[]) => {
  const runs = process.env['BENCH_COUNT'] ? benchCount() : 3;
  const { client, path, scratchDir } = await bulkDatabase(cleanups, 'bench-restore', ROWS);
  console.error('taking a backup and downloading it');
  const created = await unwrap(createBackup({ client, path }));
  const backupPath = { ...path, backup_id: created.id };
  const backup = await pollUntil(
    () => unwrap(getBackup({ client, path: backupPath })),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status !== 'completed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  const link = await unwrap(getBackupDownload({ client, path: backupPath }));
  const fetched = await downloadArchive(link.download_url, scratchDir);
  if (!fetched.file) throw new Error(`download answered ${fetched.status}`);
  const ours: number[] = [];
  const byHand: number[] = [];
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: by hand, then pgcloud`);
    byHand.push(await timeByHand(fetched.file, scratchDir));
    ours.push(await timeOurs(client, path, backup.id));
  }
  const ourMedian = middle(ours);
  const handMedian = middle(byHand);
  return [
    `restore of a ${(backup.size_bytes / 1e6).toFixed(0)} MB backup (zstd) of a database filled with ${ROWS} rows, median of ${runs}`,
    `  pgcloud in place (download + SHA-256, extract, recovery, promote, TLS check, swap): ${ourMedian.toFixed(2)} s`,
    `  by hand (extract the downloaded archive, pg_ctl start until it accepts connections): ${handMedian.toFixed(2)} s`,
    `  ratio (pgcloud / by hand): ${(ourMedian / handMedian).toFixed(2)}`,
  ].join('\n');
});
