// `npm run bench:restore`: the time pgcloud takes to restore a backup of a database of
// at least 500 MB in place (download with its checksum, extract, recovery, promotion, a
// TLS check, the swap), beside extracting the same archive and starting PostgreSQL on it
// by hand, in the same run, and the ratio. It only prints; nothing passes or fails on it.
import { performance } from 'node:perf_hooks';
import type {
  Backup,
  CreatedBackup,
  CreatedRestore,
  DownloadLink,
  Restore,
} from '@pgcloud/contracts';
import type { ApiClient, Cleanup } from '@pgcloud/testing';
import {
  RestoredByHand,
  apiData,
  benchCount,
  bulkDatabase,
  downloadArchive,
  middle,
  pollUntil,
  runBench,
} from '@pgcloud/testing';

const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');

/** Seconds of one in-place restore: from the record's start to its completion. */
async function timeOurs(api: ApiClient, path: string, backupId: string): Promise<number> {
  const created = apiData<CreatedRestore>(
    await api.post(`${path}/backups/${backupId}/restore`),
    201,
    'POST restore',
  );
  const restore = await pollUntil(
    async () =>
      apiData<Restore>(await api.get(`${path}/restores/${created.restore_id}`), 200, 'GET restore'),
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
  const { api, path, scratchDir } = await bulkDatabase(cleanups, 'bench-restore', ROWS);
  console.error('taking a backup and downloading it');
  const created = apiData<CreatedBackup>(await api.post(`${path}/backups`), 201, 'POST backup');
  const backup = await pollUntil(
    async () => apiData<Backup>(await api.get(`${path}/backups/${created.id}`), 200, 'GET backup'),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status !== 'completed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  const link = apiData<DownloadLink>(
    await api.get(`${path}/backups/${backup.id}/download`),
    200,
    'link',
  );
  const fetched = await downloadArchive(link.download_url, scratchDir);
  if (!fetched.file) throw new Error(`download answered ${fetched.status}`);
  const ours: number[] = [];
  const byHand: number[] = [];
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: by hand, then pgcloud`);
    byHand.push(await timeByHand(fetched.file, scratchDir));
    ours.push(await timeOurs(api, path, backup.id));
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
