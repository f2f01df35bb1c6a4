// `npm run bench:api`: p50, p99 and requests/s of GET /projects through the gateway and
// through a plain NestJS process with no broker, at 1 and 50 clients. It only prints;
// times depend on the machine, so nothing here passes or fails on a number.
import assert from 'node:assert/strict';
import { Logger } from '@nestjs/common';
import type { Client } from '@pgcloud/api-client';
import { createProject, listProjects, unwrap } from '@pgcloud/api-client';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, Stack, runBench, signIn, testApi } from '@pgcloud/testing';
import { startBaseline } from './baseline.js';
import { runLoad } from './load.js';
import type { Measurement } from './report.js';
import { formatReport } from './report.js';

/** Rate limits out of the way (the bench is one user hammering), quick device flow. */
const STACK_ENV = {
  RATE_LIMIT_FREE_PER_MINUTE: '100000000',
  RATE_LIMIT_FREE_BURST: '100000000',
  DEVICE_POLL_INTERVAL_SECONDS: '1',
  LOG_LEVEL: 'warn',
};
const PROJECT_COUNT = 5;
const CONCURRENCIES = [1, 50];
/** Discarded run before each measurement, so JIT and connection pools are warm. */
const WARMUP_SECONDS = 1;

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
}

function benchSeconds(): number {
  const raw = process.env['BENCH_SECONDS'] ?? '10';
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1)
    throw new Error(`BENCH_SECONDS must be a whole number of seconds >= 1, not "${raw}"`);
  return seconds;
}

async function seedProjects(owner: SignedIn): Promise<void> {
  for (let i = 1; i <= PROJECT_COUNT; i += 1) {
    await unwrap(createProject({ client: owner.client, body: { name: `bench-project-${i}` } }));
  }
}

/** Both servers must answer the same projects, or the comparison would be of two things. */
async function verifySameData(gateway: Client, baseline: Client): Promise<void> {
  const [ours, plain] = await Promise.all([
    unwrap(listProjects({ client: gateway })),
    unwrap(listProjects({ client: baseline })),
  ]);
  assert.equal(ours.projects.length, PROJECT_COUNT);
  assert.deepEqual(plain, ours, 'the baseline answers other data than the gateway');
}

async function measure(targets: Target[], seconds: number): Promise<Measurement[]> {
  const measurements: Measurement[] = [];
  for (const connections of CONCURRENCIES) {
    for (const { name, url, headers } of targets) {
      console.error(`measuring ${name} at ${connections} connection(s) for ${seconds} s`);
      await runLoad({ url, headers, connections, seconds: WARMUP_SECONDS });
      const figures = await runLoad({ url, headers, connections, seconds });
      measurements.push({ target: name, connections, figures });
    }
  }
  return measurements;
}

async function bench(seconds: number, cleanups: (() => Promise<void>)[]): Promise<string> {
  console.error('starting the stack');
  // The stack's readiness probes log each connect and each unanswered ping while the apps
  // boot; that is expected, and Stack.start throws if an app never answers.
  Logger.overrideLogger(['error']);
  const stack = await Stack.start({ env: STACK_ENV, isolated: true, output: 'files' });
  cleanups.push(() => stack.stop());
  const owner = await signIn(new ApiClient(stack.baseUrl), 'bench-owner');
  await seedProjects(owner);
  const baseline = await startBaseline(stack.env['DATABASE_URL'] ?? '', owner.user.id);
  cleanups.unshift(() => baseline.close());
  await verifySameData(owner.client, testApi(baseline.url));
  const measurements = await measure(
    [
      {
        name: 'gateway',
        url: `${stack.baseUrl}/projects`,
        headers: { authorization: `Bearer ${owner.token}` },
      },
      { name: 'baseline', url: `${baseline.url}/projects`, headers: {} },
    ],
    seconds,
  );
  return formatReport(measurements, 'gateway', 'baseline');
}

await runBench(async (cleanups) => {
  const seconds = benchSeconds();
  console.log(
    `GET /projects of ${PROJECT_COUNT} projects, ${seconds} s per run ` +
      `after ${WARMUP_SECONDS} s of warm-up; latencies in ms\n`,
  );
  return bench(seconds, cleanups);
});
