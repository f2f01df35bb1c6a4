// `npm run bench:pitr`: the time pgcloud takes for a point-in-time restore through at least
// 1 GB of WAL into a new database (download of the base backup and the WAL, recovery to the
// target, promotion), beside the same restore by hand with plain PostgreSQL in the same
// run: every sample, the medians, their spread and ratio, and the phases of each. It only
// prints; nothing passes or fails on a figure.
import {
  deleteDatabase,
  getBackup,
  getDatabaseUrl,
  getPitrConfig,
  unwrap,
} from '@pgcloud/api-client';
import { parseLsn, segmentOf } from '@pgcloud/postgres';
import type { BulkDatabase, Cleanup, PhaseSeconds, Samples } from '@pgcloud/bench-support';
import {
  benchCount,
  bulkDatabase,
  formatRatioOfMedians,
  formatSamples,
  phaseRows,
  runBench,
  timeRestorePhases,
  withParts,
} from '@pgcloud/bench-support';
import type { HandRestore, HandSource } from './by-hand.js';
import { restoreByHand } from './by-hand.js';
import type { OurRestore } from './pgcloud.js';
import { enablePitrAndWait, restoreOurs, windowPast } from './pgcloud.js';
import type { Written } from './wal-writes.js';
import { commitMarker, connect, countRows, writeWal } from './wal-writes.js';

const WAL_MB = Number(process.env['BENCH_WAL_MB'] ?? '1024');
const MB = 1_000_000;
const LABELS = { kind: 'pitr', target: 'target_database' } as const;

/** Writes the WAL, then picks the target: the recovery window's `to` once past the writes. */
async function prepare(
  bulk: BulkDatabase,
  caPem: string,
): Promise<{ written: Written; target: string; catchUpSeconds: number }> {
  const client = await connect(bulk.connection.connection_string, caPem);
  try {
    console.error(`writing ${WAL_MB} MB of WAL`);
    const written = await writeWal(client, WAL_MB * MB);
    console.error('waiting for the archive to cover the writes');
    const target = (await windowPast(bulk.client, bulk.path, written.endedAt)).to;
    const catchUpSeconds = (Date.now() - written.endedAt.getTime()) / 1000;
    // A commit after the target, archived, so that replay stops on it (both restores).
    await windowPast(bulk.client, bulk.path, await commitMarker(client));
    return { written, target, catchUpSeconds };
  } finally {
    await client.end();
  }
}

/** The base backup the restores start from, and where its WAL lies in S3. */
async function handSource(bulk: BulkDatabase): Promise<HandSource> {
  const { client, path, database, connection, stack } = bulk;
  const config = await unwrap(getPitrConfig({ client, path }));
  if (!config.base_backup_id) throw new Error('PITR is enabled without a base backup');
  const backupPath = { ...path, backup_id: config.base_backup_id };
  const backup = await unwrap(getBackup({ client, path: backupPath }));
  if (!backup.start_lsn) throw new Error(`the base backup ${backup.id} has no start_lsn`);
  return {
    client,
    backupPath,
    bucket: stack.bucket(),
    walPrefix: `projects/${database.project_id}/databases/${database.id}/wal/`,
    firstSegment: segmentOf(parseLsn(backup.start_lsn)),
    database: connection.database,
  };
}

/** The rows of `wal_filler` in the restored database `name`, over its TLS connection string. */
async function restoredRows(bulk: BulkDatabase, name: string, caPem: string): Promise<number> {
  const details = await unwrap(
    getDatabaseUrl({ client: bulk.client, path: { project_id: bulk.path.project_id, name } }),
  );
  const client = await connect(details.connection_string, caPem);
  try {
    return await countRows(client);
  } finally {
    await client.end();
  }
}

/** One pgcloud restore: its record's figures, and its phases as the provisioner timed them. */
interface OurSample extends OurRestore {
  phases: PhaseSeconds;
  rows: number;
}

await runBench(async (cleanups: Cleanup[]) => {
  const runs = benchCount(3);
  const bulk = await bulkDatabase(cleanups, 'bench-pitr', 0);
  const caPem = await (await fetch(`${bulk.stack.baseUrl}/ca.pem`)).text();
  console.error('enabling PITR (retention 1 day) and waiting for the archive to open');
  await enablePitrAndWait(bulk.client, bulk.path, 1);
  const { written, target, catchUpSeconds } = await prepare(bulk, caPem);
  const source = await handSource(bulk);
  cleanups.push(() => Promise.resolve(source.bucket.close()));
  const provisioner = bulk.stack.managementUrl('database-provisioner');
  const ours: OurSample[] = [];
  const byHand: HandRestore[] = [];
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: by hand, then pgcloud`);
    byHand.push(await restoreByHand(source, target, bulk.scratchDir));
    const name = `pitr-${run}`;
    const { result, phases } = await timeRestorePhases(provisioner, LABELS, () =>
      restoreOurs(bulk.client, bulk.path, target, name),
    );
    ours.push({ ...result, phases, rows: await restoredRows(bulk, name, caPem) });
    await unwrap(
      deleteDatabase({ client: bulk.client, path: { project_id: bulk.path.project_id, name } }),
    );
  }
  return report(written, target, catchUpSeconds, ours, byHand);
});

function report(
  written: Written,
  target: string,
  catchUpSeconds: number,
  ours: OurSample[],
  byHand: HandRestore[],
): string {
  const pgcloud: Samples = { label: 'pgcloud', values: ours.map((o) => o.seconds) };
  const hand: Samples = { label: 'by hand', values: byHand.map((h) => h.promoted) };
  const phases = phaseRows(
    ours.map((o) => o.phases),
    pgcloud.values,
  );
  const steps = [
    { label: 'downloads', values: byHand.map((h) => h.downloaded) },
    { label: 'extraction', values: byHand.map((h) => h.extracted - h.downloaded) },
    { label: 'recovery and promotion', values: byHand.map((h) => h.promoted - h.extracted) },
  ];
  const each = (values: number[]) => values.join(', ');
  return [
    `PITR restore through ${(written.walBytes / MB).toFixed(0)} MB of WAL (${written.rows} rows INSERTed) to ${target}, into a new database, ${ours.length} samples each, seconds`,
    `  the archive covered the end of the writes ${catchUpSeconds.toFixed(1)} s after it`,
    "  pgcloud: completed_at - started_at (the new database's server made meanwhile, base backup download + SHA-256 and extraction while the WAL is fetched 8 at a time, replay to the target as the WAL comes in, promotion, roles, TLS checks, swap); its phases as database-provisioner times them (pgcloud_restore_phase_duration_seconds, kind=pitr, target=target_database)",
    '  by hand (downloads included): the base backup through its link while the WAL comes from S3 8 at a time, tar --zstd -x, recovery with restore_command cp, promote, until pg_is_in_recovery() is false',
    '',
    ...formatSamples([...withParts(pgcloud, phases), ...withParts(hand, steps)]),
    '',
    formatRatioOfMedians(pgcloud, hand, 1.15),
    `wal_files_applied (pgcloud): ${each(ours.map((o) => o.walFilesApplied))}; segments fetched by hand: ${each(byHand.map((h) => h.segments))}`,
    `rows restored: pgcloud ${each(ours.map((o) => o.rows))}; by hand ${each(byHand.map((h) => h.rows))}; written ${written.rows}`,
  ].join('\n');
}
