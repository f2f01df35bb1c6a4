// `npm run bench:restore`: the time to recover a database from a backup as it grows, at
// each of BENCH_SIZES_MB (about that many MB of data directory; the one database is grown
// from one size to the next). At each size, BENCH_COUNT samples of four ways, in turn:
// pgcloud's restore into a new database, pgcloud's restore in place (with how long a
// client goes without a write meanwhile), the same archive by hand (download, extract,
// start), and pgBackRest's restore of its own full backup on the same S3. It prints every
// sample with its phases, the medians, their ratios, and each way's growth in seconds per
// GB from one size to the next. It only prints; nothing passes or fails on it.
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { Cleanup, PgBackRest } from '@pgcloud/bench-support';
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
} from '@pgcloud/bench-support';
import { resolveOsUser } from '@pgcloud/postgres';
import { timeByHand } from './by-hand.js';
import { timeInPlace, timeIntoNewDatabase } from './pgcloud.js';
import type { SizeRun } from './report.js';
import { DESCRIPTION, growthReport, sizeReport } from './report.js';
import { createProbeTable } from './write-probe.js';

const MB = 1_000_000;
/** The account PostgreSQL runs as when we are root. */
const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';
/**
 * The pause before each sample: the data a restore set aside, or a deleted database's
 * files, are removed in the background a moment after, and must not weigh on the next.
 */
const SETTLE_MS = 5000;

await runBench(async (cleanups: Cleanup[]) => {
  const count = benchCount(3);
  const sizesMb = benchSizesMb('250,1000,2000');
  const osUser = await resolveOsUser(OS_USER);
  // HTTPS for everyone: pgBackRest speaks S3 only over TLS, and so does a real deployment.
  // One row to start with: growTo fills the database to each size.
  const db = await bulkDatabaseOnHttpsS3(cleanups, 'bench-restore', 1);
  const { client, path, stack, scratchDir } = db.bulk;
  const caPem = await (await fetch(`${stack.baseUrl}/ca.pem`)).text();
  // An in-place restore keeps the database's port and credentials: the same string after.
  const connection = { connectionString: db.bulk.connection.connection_string, caPem };
  await createProbeTable(connection.connectionString, caPem);
  const s3CaPem = await readFile(db.s3.tls.certFile, 'utf8');
  const provisioner = stack.managementUrl('database-provisioner');
  const cpu = new MachineCpu();
  cpu.start();
  cleanups.push(() => Promise.resolve(cpu.stop()));
  let backRest: PgBackRest | undefined;
  const runs: SizeRun[] = [];
  const printed: string[] = [];
  for (const [index, sizeMb] of sizesMb.entries()) {
    const size = `size ${index + 1} of ${sizesMb.length}`;
    console.error(`${size}: growing the data directory to about ${sizeMb} MB`);
    const grown = await growTo(connection, db.server.pgdata, sizeMb * MB);
    console.error(`${size}: a pgcloud backup, then a pgBackRest full backup`);
    const backup = await takeBackup(client, path);
    const backupPath = { ...path, backup_id: backup.id };
    // After pgcloud's first backup: with archiving into pgBackRest's repository on, the
    // copy started by hand from it would archive there too. In-place restores turn it off
    // again (their data has a fresh postgresql.auto.conf); fullBackup turns it back on.
    // Files bundled, as pgBackRest's user guide recommends for a repository on an object store.
    backRest ??= await setUpPgBackRest(cleanups, db, osUser, { bundle: true });
    const full = await backRest.fullBackup();
    const run: SizeRun = {
      dataMb: megabytes(grown.bytes),
      rows: grown.rows,
      databaseMb: megabytes(grown.databaseBytes),
      archiveMb: megabytes(backup.sizeBytes),
      intoNew: [],
      inPlace: [],
      byHand: [],
      backRest: [],
    };
    for (let sample = 1; sample <= count; sample++) {
      const at = `${size}, sample ${sample} of ${count}`;
      console.error(`${at}: by hand`);
      await delay(SETTLE_MS);
      run.byHand.push(await timeByHand(client, backupPath, scratchDir, s3CaPem));
      console.error(`${at}: pgBackRest`);
      await delay(SETTLE_MS);
      run.backRest.push(await backRest.timedRestore(full.label));
      console.error(`${at}: pgcloud into a new database`);
      await delay(SETTLE_MS);
      const name = `copy-${index + 1}-${sample}`;
      run.intoNew.push(await timeIntoNewDatabase(provisioner, client, path, backup.id, name));
      console.error(`${at}: pgcloud in place, a client writing`);
      await delay(SETTLE_MS);
      run.inPlace.push(await timeInPlace(provisioner, client, path, backup.id, connection));
    }
    runs.push(run);
    const title = `${size}: a data directory of ${run.dataMb} MB (${run.rows} rows, the database ${run.databaseMb} MB), pgcloud's backup ${run.archiveMb} MB (zstd), ${count} samples each, seconds`;
    cpu.sample();
    const table = sizeReport(run, title, cpu);
    // Each size's table as soon as it is done: a long run shows its figures as it goes.
    console.error(table.join('\n'));
    printed.push(...table, '');
  }
  return [
    `restore of a backup as the database grows: ${sizesMb.join(', ')} MB of data directory asked for`,
    ...DESCRIPTION,
    '',
    ...printed,
    ...growthReport(runs),
  ].join('\n');
});
