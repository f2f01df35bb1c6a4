// `npm run bench:daemon-template`: the time to create a database from a template of
// about 100 MB through the local daemon, to take a snapshot of it and to reset it to the
// snapshot, each beside `createdb -T` by hand on the same server in the same run. It only
// prints; nothing passes or fails on a number.
import { resolveOsUser } from '@pgcloud/postgres';
import type { Cleanup } from '@pgcloud/bench-support';
import { LocalDaemon } from '@pgcloud/devstack';
import { benchCount, formatReport, runBench } from '@pgcloud/bench-support';
import { deleteSnapshot, timeCreatedb, timeDaemonCopy, timeReset, timeSnapshot } from './copies.js';
import { deleteCopies, makeTemplate } from './template.js';

/** The account PostgreSQL runs as when we are root, as the daemon reads it. */
const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';

/**
 * Copies one after another, the two ways taking turns so both meet the same machine;
 * each copy is deleted before the next. A first round of each is left out: the first
 * FILE_COPY pays the checkpoint that writes the freshly loaded template to disk.
 */
async function bench(count: number, cleanups: Cleanup[]): Promise<string> {
  console.error('starting a local daemon with its embedded server');
  const daemon = await LocalDaemon.start('bench-template', { LOG_LEVEL: 'warn' });
  cleanups.push(() => daemon.stop());
  const api = await daemon.api();
  console.error('filling the template');
  const template = await makeTemplate(api);
  const osUser = await resolveOsUser(OS_USER);
  const daemonTimes: number[] = [];
  const createdbTimes: number[] = [];
  const snapshotTimes: number[] = [];
  const resetTimes: number[] = [];
  for (let round = 0; round <= count; round += 1) {
    console.error(round === 0 ? 'warm-up round' : `round ${round} of ${count}`);
    const viaDaemon = await timeDaemonCopy(api, `copy_daemon_${round}`);
    const byHand = await timeCreatedb(template.connection, `copy_createdb_${round}`, osUser);
    await deleteCopies(api);
    const snapshot = `snap_${round}`;
    const snapshotTook = await timeSnapshot(api, snapshot);
    const resetTook = await timeReset(api, snapshot);
    await deleteSnapshot(api, snapshot);
    if (round === 0) continue;
    daemonTimes.push(viaDaemon);
    createdbTimes.push(byHand);
    snapshotTimes.push(snapshotTook);
    resetTimes.push(resetTook);
  }
  return [
    `template: ${(template.size / 1024 / 1024).toFixed(1)} MB\n`,
    formatReport(
      { target: 'daemon', times: daemonTimes },
      { target: 'createdb -T', times: createdbTimes },
    ),
    '',
    formatReport(
      { target: 'snapshot', times: snapshotTimes },
      { target: 'createdb -T', times: createdbTimes },
    ),
    '',
    formatReport(
      { target: 'reset', times: resetTimes },
      { target: 'createdb -T', times: createdbTimes },
    ),
  ].join('\n');
}

await runBench(async (cleanups) => {
  const count = benchCount();
  console.log(
    `${count} copies of a template, one after another, ms to a usable database;\n` +
      'daemon: POST /databases {template} to its 201 answer (FILE_COPY, then the detail record);\n' +
      'createdb -T: the same copy by hand on the same server (PostgreSQL 15 default, WAL_LOG);\n' +
      'snapshot: POST /databases/{template}/snapshots to its 201 answer (a closed FILE_COPY);\n' +
      'reset: POST /databases/{template}/reset to its 200 answer (copy, drop, rename)\n',
  );
  return bench(count, cleanups);
});
