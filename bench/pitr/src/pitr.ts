// `npm run bench:pitr`: the time to restore a database to a point in time as it grows, at
// each of BENCH_SIZES_MB (about that many MB of data directory without pg_wal; the one
// database is grown from one size to the next, the last size's WAL writes emptied first).
// At each size, a pgcloud backup and a pgBackRest full backup, then BENCH_WAL_MB of WAL
// after them and a target past its last commit; then BENCH_COUNT
// samples of three ways to that target, in turn: by hand (pgcloud's base backup and its
// archived WAL, PostgreSQL's archive recovery), pgBackRest's restore of its full backup with
// its own archive, and pgcloud's restore into a new database. Each checks the rows it
// restored. It prints every sample with its phases, the medians, their ratios, and each
// way's growth in seconds per GB. It only prints; nothing passes or fails on a figure.
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { Cleanup, HttpsS3Database } from '@pgcloud/bench-support';
import {
  benchCount,
  benchSizesMb,
  bulkDatabaseOnHttpsS3,
  growTo,
  MachineCpu,
  megabytes,
  runBench,
  setUpPgBackRest,
  takeBackup,
  timeRestorePhases,
} from '@pgcloud/bench-support';
import { parseLsn, resolveOsUser, segmentOf } from '@pgcloud/postgres';
import type { HandSource } from './by-hand.js';
import { restoreByHand } from './by-hand.js';
import { walObjects } from './wal-objects.js';
import { answerAndDelete, enablePitrAndWait, restoreOurs } from './pgcloud.js';
import type { SizeRun } from './report.js';
import { DESCRIPTION, growthReport, sizeReport } from './report.js';
import { prepareTarget } from './target.js';
import { RESTORED_SQL, checkRestored, clearWrites } from './wal-writes.js';

const WAL_MB = Number(process.env['BENCH_WAL_MB'] ?? '3200');
const MB = 1_000_000;
const LABELS = { kind: 'pitr', target: 'target_database' } as const;
/** The account PostgreSQL runs as when we are root. */
const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';
/**
 * The pause before each sample: a deleted database's files, or a copy's, are removed in
 * the background a moment after, and must not weigh on the next.
 */
const SETTLE_MS = 5000;

/** Where a restore by hand takes the backup just taken and the WAL after it. */
function handSource(
  db: HttpsS3Database,
  backup: { id: string; startLsn: string | null },
  s3CaPem: string,
): HandSource {
  const { client, path, database, connection } = db.bulk;
  if (!backup.startLsn) throw new Error(`the backup ${backup.id} has no start_lsn`);
  return {
    client,
    backupPath: { ...path, backup_id: backup.id },
    s3CaPem,
    bucket: db.bucket,
    walPrefix: `projects/${database.project_id}/databases/${database.id}/wal/`,
    firstSegment: segmentOf(parseLsn(backup.startLsn)),
    database: connection.database,
  };
}

/** The bytes of the objects a restore fetches the WAL after the backup from. */
async function storedWalBytes(source: HandSource): Promise<number> {
  const listed = await source.bucket.list(source.walPrefix);
  const sizes = new Map(listed.map((o) => [o.key, o.size]));
  return walObjects(listed, source)
    .flatMap((segment) => segment.keys)
    .reduce((sum, key) => sum + (sizes.get(key) ?? 0), 0);
}

await runBench(async (cleanups: Cleanup[]) => {
  const count = benchCount(3);
  const sizesMb = benchSizesMb('250,1000,2000');
  const osUser = await resolveOsUser(OS_USER);
  // HTTPS for everyone: pgBackRest speaks S3 only over TLS. One row to start with: growTo
  // fills the database to each size.
  const db = await bulkDatabaseOnHttpsS3(cleanups, 'bench-pitr', 1);
  const { client, path, stack, scratchDir, connection } = db.bulk;
  const caPem = await (await fetch(`${stack.baseUrl}/ca.pem`)).text();
  const s3CaPem = await readFile(db.s3.tls.certFile, 'utf8');
  // Before PITR: turning archive_mode on restarts the server. pgcloud's archive is a WAL
  // receiver of its own, beside archive_command: both archive every segment.
  console.error('setting pgBackRest up (asynchronous archiving), then enabling PITR');
  const backRest = await setUpPgBackRest(cleanups, db, osUser, {
    bundle: true,
    asyncArchive: true,
  });
  await enablePitrAndWait(client, path, 1);
  const provisioner = stack.managementUrl('database-provisioner');
  const cpu = new MachineCpu();
  cpu.start();
  cleanups.push(() => Promise.resolve(cpu.stop()));
  const runs: SizeRun[] = [];
  const printed: string[] = [];
  for (const [index, sizeMb] of sizesMb.entries()) {
    const size = `size ${index + 1} of ${sizesMb.length}`;
    console.error(`${size}: growing the data directory to about ${sizeMb} MB`);
    await clearWrites(connection.connection_string, caPem);
    // pg_wal left out: after the last size's writes it holds up to max_wal_size.
    const grown = await growTo(
      { connectionString: connection.connection_string, caPem },
      db.server.pgdata,
      sizeMb * MB,
      { withoutWal: true },
    );
    console.error(`${size}: a pgcloud backup, a pgBackRest full backup, ${WAL_MB} MB of WAL`);
    const backup = await takeBackup(client, path);
    const full = await backRest.fullBackup();
    const target = await prepareTarget(db, caPem, WAL_MB * MB, backup.id);
    const source = handSource(db, backup, s3CaPem);
    const storedWal = await storedWalBytes(source);
    const expect = (way: string, answer: string) => checkRestored(way, answer, target.written.rows);
    const run: SizeRun = {
      dataMb: megabytes(grown.bytes),
      rows: grown.rows,
      databaseMb: megabytes(grown.databaseBytes),
      backupMb: megabytes(backup.sizeBytes),
      storedWalMb: megabytes(storedWal),
      target,
      ours: [],
      byHand: [],
      backRest: [],
    };
    for (let sample = 1; sample <= count; sample++) {
      const at = `${size}, sample ${sample} of ${count}`;
      console.error(`${at}: by hand`);
      await delay(SETTLE_MS);
      const hand = await restoreByHand(source, target.time, scratchDir);
      expect('by hand', hand.answer);
      run.byHand.push(hand);
      console.error(`${at}: pgBackRest`);
      await delay(SETTLE_MS);
      const theirs = await backRest.timedPitr(
        full.label,
        target.time,
        connection.database,
        RESTORED_SQL,
      );
      expect('pgBackRest', theirs.answer);
      run.backRest.push(theirs);
      console.error(`${at}: pgcloud into a new database`);
      await delay(SETTLE_MS);
      const name = `pitr-${index + 1}-${sample}`;
      const { result, phases } = await timeRestorePhases(provisioner, LABELS, () =>
        restoreOurs(client, path, target.time, name),
      );
      expect('pgcloud', await answerAndDelete(client, path.project_id, name, caPem));
      run.ours.push({ ...result, phases });
    }
    runs.push(run);
    const walMb = megabytes(target.written.walBytes);
    const title = `${size}: a data directory of ${run.dataMb} MB without pg_wal (${run.rows} rows, the database ${run.databaseMb} MB), pgcloud's backup ${run.backupMb} MB (zstd), then ${walMb} MB of WAL written (${target.plan.wal_files} segments in pgcloud's plan, stored in ${run.storedWalMb} MB), ${count} samples each, seconds`;
    cpu.sample();
    const table = sizeReport(run, title, cpu);
    // Each size's table as soon as it is done: a long run shows its figures as it goes.
    console.error(table.join('\n'));
    printed.push(...table, '');
  }
  return [
    `point-in-time restore into a new database as the database grows: ${sizesMb.join(', ')} MB of data directory (without pg_wal) asked for, ${WAL_MB} MB of WAL after each size's backups`,
    ...DESCRIPTION,
    '',
    ...printed,
    ...growthReport(runs),
  ].join('\n');
});
