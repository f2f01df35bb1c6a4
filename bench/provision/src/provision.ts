// `npm run bench:provision`: median and p90 time from POST .../databases to the database
// reading `running`, beside a cluster made by hand (initdb, pg_ctl start, SELECT 1) on the
// same machine in the same run. It only prints; nothing passes or fails on a number.
import { Logger } from '@nestjs/common';
import { createProject, unwrap } from '@pgcloud/api-client';
import type { Cleanup } from '@pgcloud/bench-support';
import { ApiClient } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import { benchCount, formatReport, runBench } from '@pgcloud/bench-support';
import { openBaseline } from './baseline.js';
import { POLL_MS, deleteDatabases, signInPro, timeCreate } from './pgcloud.js';

/**
 * The bench polls often as a Pro user: Pro's rate limit out of the way, and a quick
 * device flow for the two sign-ins.
 */
const STACK_ENV = {
  RATE_LIMIT_PRO_PER_MINUTE: '100000000',
  RATE_LIMIT_PRO_BURST: '100000000',
  DEVICE_POLL_INTERVAL_SECONDS: '1',
  LOG_LEVEL: 'warn',
};
/** The account PostgreSQL runs as when we are root, as the provisioner reads it. */
const OS_USER = process.env['PG_OS_USER'] ?? 'postgres';

/**
 * Runs before the stack starts, so its idle apps take no CPU from the baseline; each
 * cluster is stopped and removed before the next one is made.
 */
async function measureBaseline(count: number, cleanups: Cleanup[]): Promise<number[]> {
  const baseline = await openBaseline(OS_USER);
  cleanups.push(() => baseline.close());
  const times: number[] = [];
  for (let i = 1; i <= count; i += 1) {
    console.error(`baseline: cluster ${i} of ${count}`);
    times.push(await baseline.timeOne(i));
  }
  await baseline.close();
  return times;
}

async function measurePgcloud(count: number, cleanups: Cleanup[]): Promise<number[]> {
  console.error('starting the stack');
  // The stack's readiness probes log each connect and each unanswered ping while the apps
  // boot; that is expected, and Stack.start throws if an app never answers.
  Logger.overrideLogger(['error']);
  const stack = await Stack.start({ env: STACK_ENV, isolated: true, output: 'files' });
  cleanups.push(() => stack.stop());
  const { client } = await signInPro(stack, new ApiClient(stack.baseUrl), 'bench-owner');
  const project = await unwrap(createProject({ client, body: { name: 'bench-provision' } }));
  cleanups.unshift(() => deleteDatabases(client, project.id));
  const times: number[] = [];
  // One after another: each time is one database's own, not a share of a queue.
  for (let i = 1; i <= count; i += 1) {
    console.error(`pgcloud: database ${i} of ${count}`);
    times.push(await timeCreate(client, project.id, `bench-db-${i}`));
  }
  return times;
}

async function bench(count: number, cleanups: Cleanup[]): Promise<string> {
  const baseline = await measureBaseline(count, cleanups);
  const pgcloud = await measurePgcloud(count, cleanups);
  return formatReport(
    { target: 'pgcloud', times: pgcloud },
    { target: 'baseline', times: baseline },
  );
}

await runBench(async (cleanups) => {
  const count = benchCount();
  console.log(
    `${count} databases created one after another, ms from POST to reading running ` +
      `(polled every ${POLL_MS} ms);\nbaseline: ${count} times initdb, pg_ctl start and a first ` +
      `SELECT 1 over the socket\n`,
  );
  return bench(count, cleanups);
});
