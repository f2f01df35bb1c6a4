// `npm run bench:backup`: MB/s of a pgcloud backup (pg_basebackup streamed through SHA-256
// into an S3 multipart upload) of a database of at least 500 MB, beside plain
// pg_basebackup with the same compression into a local file, in the same run, and the
// ratio. It only prints; nothing passes or fails on a number.
import { execFileSync } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Client } from '@pgcloud/api-client';
import { createBackup, deleteBackup, getBackup, unwrap } from '@pgcloud/api-client';
import {
  BASE_BACKUP_ARGS,
  ensureOwnedDir,
  pgBinDir,
  resolveOsUser,
  runPgTool,
} from '@pgcloud/postgres';
import type { BulkDatabase, Cleanup, DatabasePath } from '@pgcloud/testing';
import { benchCount, bulkDatabase, median, pollUntil, runBench } from '@pgcloud/testing';

const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';
const MB = 1_000_000;
const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');

/** Seconds our backup streamed (from the record's start to its completion), and its size. */
async function timeOurs(
  client: Client,
  database: DatabasePath,
): Promise<{ seconds: number; bytes: number }> {
  const created = await unwrap(createBackup({ client, path: database }));
  const path = { ...database, backup_id: created.id };
  const backup = await pollUntil(
    () => unwrap(getBackup({ client, path })),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status === 'failed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  await deleteBackup({ client, path });
  const ms = Date.parse(backup.completed_at ?? '') - Date.parse(backup.started_at ?? '');
  return { seconds: ms / 1000, bytes: backup.size_bytes };
}

/** Plain pg_basebackup, same arguments, into a local file, over the server's socket. */
async function timeBaseline(bulk: BulkDatabase): Promise<number> {
  const osUser = await resolveOsUser(OS_USER);
  const target = join(bulk.scratchDir, `baseline-${Date.now()}`);
  await ensureOwnedDir(target, osUser);
  const serverDir = join(bulk.stack.dataDir, 'local', 'servers', bulk.database.platform_service_id);
  const args = BASE_BACKUP_ARGS.map((arg) => (arg === '--pgdata=-' ? `--pgdata=${target}` : arg));
  const started = performance.now();
  await runPgTool(
    pgBinDir(),
    'pg_basebackup',
    [...args, '-h', join(serverDir, 'socket'), '-p', String(bulk.connection.port)],
    { osUser },
  );
  const seconds = (performance.now() - started) / 1000;
  await stat(join(target, 'base.tar.zst'));
  await rm(target, { recursive: true, force: true });
  return seconds;
}

await runBench(async (cleanups: Cleanup[]) => {
  const runs = benchCount(3);
  const bulk = await bulkDatabase(cleanups, 'bench-backup', ROWS);
  // What a base backup copies: the data directory (WAL included, which -X fetch takes too).
  const pgdata = join(
    bulk.stack.dataDir,
    'local',
    'servers',
    bulk.database.platform_service_id,
    'pgdata',
  );
  const clusterBytes = Number(
    execFileSync('du', ['-sb', pgdata], { encoding: 'utf8' }).split('\t')[0],
  );
  const ours: number[] = [];
  const baseline: number[] = [];
  let archiveBytes = 0;
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: baseline, then pgcloud`);
    baseline.push(await timeBaseline(bulk));
    const mine = await timeOurs(bulk.client, bulk.path);
    ours.push(mine.seconds);
    archiveBytes = mine.bytes;
  }
  const rate = (seconds: number): string => (clusterBytes / MB / seconds).toFixed(0);
  const ourMedian = median(ours);
  const baselineMedian = median(baseline);
  return [
    `backup throughput, ${(clusterBytes / MB).toFixed(0)} MB of data (archive ${(archiveBytes / MB).toFixed(0)} MB, zstd), median of ${runs}`,
    `  pgcloud  (pg_basebackup -> SHA-256 -> S3 multipart): ${ourMedian.toFixed(2)} s  ${rate(ourMedian)} MB/s`,
    `  baseline (pg_basebackup -> local file):              ${baselineMedian.toFixed(2)} s  ${rate(baselineMedian)} MB/s`,
    `  ratio (pgcloud MB/s / baseline MB/s): ${(baselineMedian / ourMedian).toFixed(2)}  (goal: at least 0.9)`,
  ].join('\n');
});
