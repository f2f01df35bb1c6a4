// `npm run bench:backup`: MB/s of a pgcloud backup (pg_basebackup streamed through SHA-256
// into an S3 multipart upload) of a database of at least 500 MB, beside plain
// pg_basebackup with the same compression into a local file, in the same run, and the
// ratio. It only prints; nothing passes or fails on a number.
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type {
  Backup,
  ConnectionDetails,
  CreatedBackup,
  Database,
  Project,
} from '@pgcloud/contracts';
import {
  BASE_BACKUP_ARGS,
  ensureOwnedDir,
  pgBinDir,
  resolveOsUser,
  runPgTool,
} from '@pgcloud/postgres';
import type { ApiResponse, Cleanup, SuccessBody } from '@pgcloud/testing';
import { ApiClient, Stack, runBench, signIn } from '@pgcloud/testing';
import pg from 'pg';

const STACK_ENV = {
  RATE_LIMIT_FREE_PER_MINUTE: '100000',
  RATE_LIMIT_FREE_BURST: '10000',
  DEVICE_POLL_INTERVAL_SECONDS: '1',
  LOG_LEVEL: 'warn',
};
const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';
const MB = 1_000_000;
const RUNS = Number(process.env['BENCH_COUNT'] ?? '3');
// About 540 MB of rows that compress about in half, like real data more than zeros do.
const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');

function data<T>(response: ApiResponse<unknown>, status: number, what: string): T {
  if (response.status !== status)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return (response.body as SuccessBody<T>).data;
}

/** Seconds our backup streamed: from the record's start to its completion. */
async function timeOurs(api: ApiClient, path: string): Promise<{ seconds: number; bytes: number }> {
  const created = data<CreatedBackup>(await api.post(path), 201, `POST ${path}`);
  for (;;) {
    const backup = data<Backup>(await api.get(`${path}/${created.id}`), 200, 'GET backup');
    if (backup.status === 'failed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
    if (backup.status === 'completed') {
      const ms = Date.parse(backup.completed_at ?? '') - Date.parse(backup.started_at ?? '');
      await api.delete(`${path}/${created.id}`);
      return { seconds: ms / 1000, bytes: backup.size_bytes };
    }
    await delay(50);
  }
}

/** Plain pg_basebackup, same arguments, into a local file, over the server's socket. */
async function timeBaseline(stack: Stack, serverId: string, port: number, dir: string) {
  const osUser = await resolveOsUser(OS_USER);
  const target = join(dir, `baseline-${Date.now()}`);
  await ensureOwnedDir(target, osUser);
  const socketDir = join(stack.dataDir, 'local', 'servers', serverId, 'socket');
  const args = BASE_BACKUP_ARGS.map((arg) => (arg === '--pgdata=-' ? `--pgdata=${target}` : arg));
  const started = performance.now();
  await runPgTool(pgBinDir(), 'pg_basebackup', [...args, '-h', socketDir, '-p', String(port)], {
    osUser,
  });
  const seconds = (performance.now() - started) / 1000;
  const { size } = await stat(join(target, 'base.tar.zst'));
  await rm(target, { recursive: true, force: true });
  return { seconds, bytes: size };
}

async function fill(connectionString: string, caPem: string): Promise<void> {
  const url = new URL(connectionString);
  url.searchParams.delete('sslmode');
  const client = new pg.Client({ connectionString: url.toString(), ssl: { ca: caPem } });
  await client.connect();
  try {
    await client.query(`CREATE TABLE filler AS SELECT g AS id,
      md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) AS payload
      FROM generate_series(1, ${ROWS}) g`);
  } finally {
    await client.end();
  }
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

await runBench(async (cleanups: Cleanup[]) => {
  Logger.overrideLogger(['error']);
  console.error('starting the stack (with a local S3 unless S3_ENDPOINT is set)');
  const stack = await Stack.start({ env: STACK_ENV, isolated: true, output: 'files' });
  cleanups.push(() => stack.stop());
  const dir = await mkdtemp(join(tmpdir(), 'pgcloud-bench-backup-'));
  await chmod(dir, 0o755);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const { api } = await signIn(new ApiClient(stack.baseUrl), 'bench');
  const project = data<Project>(
    await api.post('/projects', { name: 'bench-backup' }),
    201,
    'project',
  );
  const base = `/projects/${project.id}/databases`;
  data(await api.post(base, { name: 'bulk' }), 201, 'POST database');
  let database: Database;
  do {
    await delay(100);
    database = data<Database>(await api.get(`${base}/bulk`), 200, 'GET database');
  } while (database.status === 'provisioning');
  const connection = data<ConnectionDetails>(await api.get(`${base}/bulk/url`), 200, 'url');
  const caPem = await (await fetch(`${stack.baseUrl}/ca.pem`)).text();
  console.error(`filling the database with ${ROWS} rows`);
  await fill(connection.connection_string, caPem);
  // What a base backup copies: the data directory (WAL included, which -X fetch takes too).
  const pgdata = join(stack.dataDir, 'local', 'servers', database.platform_service_id, 'pgdata');
  const clusterBytes = Number(
    execFileSync('du', ['-sb', pgdata], { encoding: 'utf8' }).split('\t')[0],
  );
  const path = `${base}/bulk/backups`;
  const ours: number[] = [];
  const baseline: number[] = [];
  let archiveBytes = 0;
  for (let run = 1; run <= RUNS; run++) {
    console.error(`run ${run} of ${RUNS}: baseline, then pgcloud`);
    baseline.push(
      (await timeBaseline(stack, database.platform_service_id, connection.port, dir)).seconds,
    );
    const mine = await timeOurs(api, path);
    ours.push(mine.seconds);
    archiveBytes = mine.bytes;
  }
  const rate = (seconds: number): string => (clusterBytes / MB / seconds).toFixed(0);
  const ourMedian = median(ours);
  const baselineMedian = median(baseline);
  return [
    `backup throughput, ${(clusterBytes / MB).toFixed(0)} MB of data (archive ${(archiveBytes / MB).toFixed(0)} MB, zstd), median of ${RUNS}`,
    `  pgcloud  (pg_basebackup -> SHA-256 -> S3 multipart): ${ourMedian.toFixed(2)} s  ${rate(ourMedian)} MB/s`,
    `  baseline (pg_basebackup -> local file):              ${baselineMedian.toFixed(2)} s  ${rate(baselineMedian)} MB/s`,
    `  ratio (pgcloud MB/s / baseline MB/s): ${(baselineMedian / ourMedian).toFixed(2)}  (goal: at least 0.9)`,
  ].join('\n');
});
