// `npm run bench:restore`: the time pgcloud takes to restore a backup of a database of
// at least 500 MB in place (download with its checksum, extract, recovery, promotion, a
// TLS check, the swap), beside extracting the same archive and starting PostgreSQL on it
// by hand, in the same run, and the ratio. It only prints; nothing passes or fails on it.
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type {
  Backup,
  ConnectionDetails,
  CreatedBackup,
  CreatedRestore,
  Database,
  DownloadLink,
  Project,
  Restore,
} from '@pgcloud/contracts';
import type { OsUser } from '@pgcloud/postgres';
import { ensureOwnedDir, pgBinDir, resolveOsUser, runAsOsUser, runPgTool } from '@pgcloud/postgres';
import type { ApiClient, ApiResponse, Cleanup, SuccessBody } from '@pgcloud/testing';
import {
  ApiClient as Client,
  Stack,
  benchCount,
  freePort,
  runBench,
  signIn,
} from '@pgcloud/testing';
import pg from 'pg';

const STACK_ENV = {
  RATE_LIMIT_FREE_PER_MINUTE: '100000',
  RATE_LIMIT_FREE_BURST: '10000',
  DEVICE_POLL_INTERVAL_SECONDS: '1',
  LOG_LEVEL: 'warn',
};
const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';
const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');

function data<T>(response: ApiResponse<unknown>, status: number, what: string): T {
  if (response.status !== status)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return (response.body as SuccessBody<T>).data;
}

async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await delay(100);
  }
}

/** Seconds of one in-place restore: from the record's start to its completion. */
async function timeOurs(api: ApiClient, path: string, backupId: string): Promise<number> {
  const created = data<CreatedRestore>(
    await api.post(`${path}/backups/${backupId}/restore`),
    201,
    'POST restore',
  );
  const restore = await poll(
    async () =>
      data<Restore>(await api.get(`${path}/restores/${created.restore_id}`), 200, 'GET restore'),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restore.status === 'failed') throw new Error(`restore failed: ${restore.error ?? '?'}`);
  return (Date.parse(restore.completed_at ?? '') - Date.parse(restore.started_at)) / 1000;
}

/** Seconds to extract the archive and start PostgreSQL on it (crash recovery included). */
async function timeByHand(archive: string, root: string, osUser: OsUser): Promise<number> {
  const dir = join(root, `by-hand-${Date.now()}`);
  const pgdata = join(dir, 'pgdata');
  await ensureOwnedDir(dir, osUser);
  await ensureOwnedDir(pgdata, osUser);
  const port = await freePort();
  const options = `-c port=${port} -c listen_addresses='' -c unix_socket_directories=${dir} -c ssl=off`;
  const binDir = pgBinDir();
  const started = performance.now();
  await runAsOsUser('/bin/tar', ['--zstd', '-xf', archive, '-C', pgdata], { osUser });
  await runPgTool(
    binDir,
    'pg_ctl',
    ['-D', pgdata, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '600', 'start'],
    { osUser },
  );
  const seconds = (performance.now() - started) / 1000;
  await runPgTool(binDir, 'pg_ctl', ['-D', pgdata, '-m', 'immediate', '-w', 'stop'], { osUser });
  await rm(dir, { recursive: true, force: true });
  return seconds;
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
  const runs = process.env['BENCH_COUNT'] ? benchCount() : 3;
  const osUser = await resolveOsUser(OS_USER);
  console.error('starting the stack (with a local S3 unless S3_ENDPOINT is set)');
  const stack = await Stack.start({ env: STACK_ENV, isolated: true, output: 'files' });
  cleanups.push(() => stack.stop());
  const root = await mkdtemp(join(tmpdir(), 'pgcloud-bench-restore-'));
  await chmod(root, 0o755);
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const { api } = await signIn(new Client(stack.baseUrl), 'bench');
  const project = data<Project>(
    await api.post('/projects', { name: 'bench-restore' }),
    201,
    'project',
  );
  const base = `/projects/${project.id}/databases`;
  data(await api.post(base, { name: 'bulk' }), 201, 'POST database');
  await poll(
    async () => data<Database>(await api.get(`${base}/bulk`), 200, 'GET database'),
    (d) => d.status !== 'provisioning',
  );
  const path = `${base}/bulk`;
  const connection = data<ConnectionDetails>(await api.get(`${path}/url`), 200, 'url');
  const caPem = await (await fetch(`${stack.baseUrl}/ca.pem`)).text();
  console.error(`filling the database with ${ROWS} rows, then a backup`);
  await fill(connection.connection_string, caPem);
  const created = data<CreatedBackup>(await api.post(`${path}/backups`), 201, 'POST backup');
  const backup = await poll(
    async () => data<Backup>(await api.get(`${path}/backups/${created.id}`), 200, 'GET backup'),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status !== 'completed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  const link = data<DownloadLink>(
    await api.get(`${path}/backups/${backup.id}/download`),
    200,
    'link',
  );
  const archive = join(root, 'backup.tar.zst');
  const download = await fetch(link.download_url);
  if (!download.ok || !download.body) throw new Error(`download answered ${download.status}`);
  await pipeline(Readable.fromWeb(download.body), createWriteStream(archive));
  const ours: number[] = [];
  const byHand: number[] = [];
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: by hand, then pgcloud`);
    byHand.push(await timeByHand(archive, root, osUser));
    ours.push(await timeOurs(api, path, backup.id));
  }
  const ourMedian = median(ours);
  const handMedian = median(byHand);
  return [
    `restore of a ${(backup.size_bytes / 1e6).toFixed(0)} MB backup (zstd) of a database filled with ${ROWS} rows, median of ${runs}`,
    `  pgcloud in place (download + SHA-256, extract, recovery, promote, TLS check, swap): ${ourMedian.toFixed(2)} s`,
    `  by hand (extract the downloaded archive, pg_ctl start until it accepts connections): ${handMedian.toFixed(2)} s`,
    `  ratio (pgcloud / by hand): ${(ourMedian / handMedian).toFixed(2)}`,
  ].join('\n');
});
