// `npm run bench:branch`: the time to a running branch (no target) of a database of about
// 1 GB, beside the same copy made by hand (pg_basebackup, start, a TLS login) and beside
// today's other way to a copy (a backup, then its restore into a new database), each a
// median of BENCH_COUNT (3) rounds in one run. It only prints; nothing passes or fails on a
// number.
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { resolveOsUser } from '@pgcloud/postgres';
import { benchCount, bulkDatabase, formatReport, runBench } from '@pgcloud/bench-support';
import { serverSocket, timeByHand } from './by-hand.js';
import { timeBackupRestore, timeBranch } from './pgcloud.js';

/** Rows of md5 text in the source: 6,000,000 come to about 1 GB on disk. */
const ROWS = Number(process.env['BENCH_BRANCH_ROWS'] ?? 6_000_000);
/** The account PostgreSQL runs as when we are root. */
const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';
/** The pause before each copy, for the last one's removal to end. */
const SETTLE_MS = 5000;

await runBench(async (cleanups) => {
  const count = benchCount(3);
  console.log(
    `${count} rounds, ms to a running copy of a database of ${ROWS} rows (about ` +
      `${Math.round(ROWS / 6000)} MB), the three ways in a turning order, 5 s apart;\n` +
      'branch: POST .../databases {from} (no target) until it reads running;\n' +
      'by hand: pg_basebackup from the source, pg_ctl start, a TLS login;\n' +
      'backup+restore: a backup, then its restore into a new database until it runs\n',
  );
  const bulk = await bulkDatabase(cleanups, 'bench-branch', ROWS);
  const osUser = await resolveOsUser(OS_USER);
  const source = serverSocket(bulk.stack.dataDir, bulk.database.platform_service_id);
  const branches: number[] = [];
  const byHand: number[] = [];
  const backupRestores: number[] = [];
  // The order turns each round, and each copy starts on a settled machine: the deleted
  // copies' files and objects are removed in the background a moment after.
  const ways = [
    async (round: number) => {
      branches.push(await timeBranch(bulk.client, bulk.path, `branch-${round}`));
    },
    async (round: number) => {
      const dir = join(bulk.scratchDir, `copy-${round}`);
      byHand.push(await timeByHand(source, bulk.connection, osUser, dir));
    },
    async (round: number) => {
      backupRestores.push(await timeBackupRestore(bulk.client, bulk.path, `restored-${round}`));
    },
  ];
  for (let round = 1; round <= count; round += 1) {
    for (let i = 0; i < ways.length; i += 1) {
      console.error(`round ${round} of ${count}: way ${((round + i - 1) % ways.length) + 1}`);
      await ways[(round + i - 1) % ways.length]?.(round);
      await delay(SETTLE_MS);
    }
  }
  return [
    formatReport({ target: 'branch', times: branches }, { target: 'by hand', times: byHand }),
    '',
    formatReport(
      { target: 'branch', times: branches },
      { target: 'backup+restore', times: backupRestores },
    ),
  ].join('\n');
});
