// `npm run bench:backup`: MB/s of a full backup of a database of at least 500 MB, by three
// targets in the same run, alternating: plain pg_basebackup with pgcloud's arguments into
// a local file, pgBackRest into the same S3 bucket, and pgcloud (pg_basebackup streamed
// through SHA-256 into an S3 multipart upload). Every result is restored and its rows
// counted before it counts. It only prints; nothing passes or fails on a number.
import { rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  createBackup,
  createdRestore,
  deleteBackup,
  deleteDatabase,
  getBackup,
  getDatabaseUrl,
  getRestore,
  restoreBackup,
  unwrap,
} from '@pgcloud/api-client';
import {
  baseBackupArgs,
  ensureOwnedDir,
  pgBinDir,
  resolveOsUser,
  runPgTool,
} from '@pgcloud/postgres';
import type { BulkDatabase, Cleanup, Samples } from '@pgcloud/bench-support';
import { RestoredByHand } from '@pgcloud/testing';
import {
  benchCount,
  bulkDatabaseOnHttpsS3,
  dataDirectoryBytes,
  formatSamples,
  median,
  pollUntil,
  runBench,
  setUpPgBackRest,
} from '@pgcloud/bench-support';
import pg from 'pg';

const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';
const MB = 1_000_000;
const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');
const COUNT_SQL = 'SELECT count(*) FROM filler';

/** One sample of a target: its seconds, and the rows its result held once restored. */
interface Sample {
  seconds: number;
  rows: number;
}

/** Plain pg_basebackup, pgcloud's arguments, into a local file over the server's socket. */
async function baseline(bulk: BulkDatabase, serverDir: string): Promise<Sample> {
  const osUser = await resolveOsUser(OS_USER);
  const target = join(bulk.scratchDir, `baseline-${Date.now()}`);
  await ensureOwnedDir(target, osUser, 0o755);
  try {
    const args = baseBackupArgs(availableParallelism()).map((arg) =>
      arg === '--pgdata=-' ? `--pgdata=${target}` : arg,
    );
    const socket = ['-h', join(serverDir, 'socket'), '-p', String(bulk.connection.port)];
    const started = performance.now();
    await runPgTool(pgBinDir(), 'pg_basebackup', [...args, ...socket], { osUser });
    const seconds = (performance.now() - started) / 1000;
    const restored = await RestoredByHand.extract(join(target, 'base.tar.zst'), bulk.scratchDir);
    try {
      await restored.start();
      return { seconds, rows: Number(await restored.query('bulk', COUNT_SQL)) };
    } finally {
      await restored.remove();
    }
  } finally {
    await rm(target, { recursive: true, force: true });
  }
}

/**
 * A pgcloud backup (`completed_at - started_at` of its record), then restored through the
 * API into a new database whose rows are counted; both go afterwards.
 */
async function ours(bulk: BulkDatabase, caPem: string, run: number): Promise<Sample> {
  const { client, path } = bulk;
  const created = await unwrap(createBackup({ client, path }));
  const backupPath = { ...path, backup_id: created.id };
  const backup = await pollUntil(
    () => unwrap(getBackup({ client, path: backupPath })),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status === 'failed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  const seconds =
    (Date.parse(backup.completed_at ?? '') - Date.parse(backup.started_at ?? '')) / 1000;
  const name = `verify-${run}`;
  const restore = createdRestore(
    await unwrap(restoreBackup({ client, path: backupPath, body: { target_database: name } })),
  );
  const restored = await pollUntil(
    () => unwrap(getRestore({ client, path: { ...path, restore_id: restore.restore_id } })),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restored.status === 'failed') throw new Error(`restore failed: ${restored.error ?? '?'}`);
  const copy = { project_id: path.project_id, name };
  const details = await unwrap(getDatabaseUrl({ client, path: copy }));
  const url = new URL(details.connection_string);
  url.searchParams.delete('sslmode');
  const db = new pg.Client({ connectionString: url.toString(), ssl: { ca: caPem } });
  await db.connect();
  try {
    const { rows } = await db.query<{ count: string }>(COUNT_SQL);
    return { seconds, rows: Number(rows[0]?.count) };
  } finally {
    await db.end();
    await unwrap(deleteDatabase({ client, path: copy }));
    await unwrap(deleteBackup({ client, path: backupPath }));
  }
}

function report(
  title: string,
  clusterBytes: number,
  samples: { label: string; values: Sample[] }[],
): string {
  const rows: Samples[] = samples.flatMap(({ label, values }) => [
    { label: `${label}, s`, values: values.map((s) => s.seconds) },
    { label: `${label}, MB/s`, values: values.map((s) => clusterBytes / MB / s.seconds) },
  ]);
  const medianOf = (label: string) =>
    median(samples.find((s) => s.label === label)?.values.map((v) => v.seconds) ?? []);
  const [plain, backRest, pgcloud] = ['pg_basebackup', 'pgBackRest', 'pgcloud'].map(medianOf);
  const counted = samples.map(
    ({ label, values }) => `${label} ${values.map((s) => s.rows).join(', ')}`,
  );
  return [
    title,
    "  pg_basebackup: pgcloud's arguments (one tar, -X fetch, client zstd with a thread per core, fast checkpoint) into a local file over the socket, from its start to its exit",
    '  pgBackRest: `pgbackrest --type=full backup` into the same bucket of the same S3 (HTTPS), zstd, process-max = cores, from its start to its exit',
    '  pgcloud: completed_at - started_at of a backup (pg_basebackup over TLS, SHA-256, S3 multipart upload over HTTPS)',
    '',
    ...formatSamples(rows),
    '',
    `pgcloud / pgBackRest, median seconds: ${((pgcloud ?? NaN) / (backRest ?? NaN)).toFixed(2)}  (goal: at most 1)`,
    `pgcloud / pg_basebackup to a local file, median seconds: ${((pgcloud ?? NaN) / (plain ?? NaN)).toFixed(2)}  (goal: at most 1.2)`,
    `rows in each restored result (written ${ROWS}): ${counted.join('; ')}`,
  ].join('\n');
}

await runBench(async (cleanups: Cleanup[]) => {
  const runs = benchCount(3);
  // HTTPS for everyone: pgBackRest speaks S3 only over TLS, and so does a real deployment.
  const db = await bulkDatabaseOnHttpsS3(cleanups, 'bench-backup', ROWS);
  const { bulk, server } = db;
  const serverDir = server.serverDir;
  const clusterBytes = dataDirectoryBytes(server.pgdata);
  console.error('setting pgBackRest up: a stanza, WAL archiving into its repository');
  const backRest = await setUpPgBackRest(cleanups, db, await resolveOsUser(OS_USER));
  const caPem = await (await fetch(`${bulk.stack.baseUrl}/ca.pem`)).text();
  const samples = { plain: [] as Sample[], backRest: [] as Sample[], ours: [] as Sample[] };
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: pg_basebackup, pgBackRest, pgcloud (each restored)`);
    samples.plain.push(await baseline(bulk, serverDir));
    const full = await backRest.fullBackup();
    const rows = Number(await backRest.restoreAndQuery(full.label, 'bulk', COUNT_SQL));
    samples.backRest.push({ seconds: full.seconds, rows });
    samples.ours.push(await ours(bulk, caPem, run));
  }
  for (const [label, values] of Object.entries(samples))
    for (const sample of values)
      if (sample.rows !== ROWS)
        throw new Error(`${label}: ${sample.rows} rows restored, not ${ROWS}`);
  const title = `full backup of ${(clusterBytes / MB).toFixed(0)} MB of data directory (${ROWS} rows), ${runs} samples each, alternating`;
  return report(title, clusterBytes, [
    { label: 'pg_basebackup', values: samples.plain },
    { label: 'pgBackRest', values: samples.backRest },
    { label: 'pgcloud', values: samples.ours },
  ]);
});
