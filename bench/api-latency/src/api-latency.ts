// `npm run bench:api`: p50, p99 and requests/s of pgcloud's API through the gateway beside
// plain NestJS processes with no broker, at 1 and 50 clients, with a breakdown of where a
// gateway request's time goes. It only prints; times depend on the machine, so nothing
// here passes or fails on a number.
import assert from 'node:assert/strict';
import { Logger } from '@nestjs/common';
import type { Client } from '@pgcloud/api-client';
import { createProject, listProjects, unwrap } from '@pgcloud/api-client';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, signIn, testApi } from '@pgcloud/testing';
import { Stack } from '@pgcloud/devstack';
import { runBench } from '@pgcloud/bench-support';
import { startBaseline } from './baseline.js';
import type { HopReading } from './breakdown.js';
import { formatHops, hopsBetween, readHops } from './breakdown.js';
import type { CpuReading } from './cpu.js';
import { addCpuUsed, cpuUsed, formatCpu, readCpu } from './cpu.js';
import { startFloor } from './floor.js';
import type { LoadSample, Scenario } from './load.js';
import { figuresOf, runLoad } from './load.js';
import type { Measurement } from './report.js';
import { formatReport } from './report.js';

/**
 * Rate limits and quotas out of the way (the bench is one user hammering), a quick device
 * flow, and Redis for the rate limits, as a deployment with several gateways runs.
 */
const STACK_ENV = {
  RATE_LIMIT_FREE_PER_MINUTE: '100000000',
  RATE_LIMIT_FREE_BURST: '100000000',
  PROJECT_LIMIT_FREE: '1000000',
  DEVICE_POLL_INTERVAL_SECONDS: '1',
  REDIS_URL: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
  LOG_LEVEL: 'warn',
};
const PROJECT_COUNT = 5;
const CONCURRENCIES = [1, 50];
/** Where the cores are full, so CPU per request is what sets requests/s. */
const CPU_PROFILED_CONCURRENCY = 50;
/** Discarded run of each target before its slices at a concurrency: pools at that size. */
const WARMUP_SECONDS = 1;
/**
 * Discarded run of every target at the highest concurrency before the first measurement:
 * 1 s at 1 connection is a few hundred requests, too few for V8 to have compiled a
 * gateway request's whole path, and the stack's apps and its S3 settle after their start.
 */
const FIRST_WARMUP_SECONDS = 5;
const BASELINE = 'baseline';

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** Reads the apps' histograms, for the breakdown of a gateway's requests. */
  readHops?: () => Promise<HopReading>;
}

/** One route measured on several targets; each target's ratios are to the baseline's. */
interface Route {
  name: string;
  scenario: Scenario;
  targets: Target[];
}

function benchSeconds(): number {
  const raw = process.env['BENCH_SECONDS'] ?? '10';
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1)
    throw new Error(`BENCH_SECONDS must be a whole number of seconds >= 1, not "${raw}"`);
  return seconds;
}

async function seedProjects(owner: SignedIn): Promise<string> {
  let region = '';
  for (let i = 1; i <= PROJECT_COUNT; i += 1) {
    const project = await unwrap(
      createProject({ client: owner.client, body: { name: `bench-project-${i}` } }),
    );
    region = project.default_region;
  }
  return region;
}

/** Every target must answer the same projects, or the comparison would be of two things. */
async function verifySameData(gateway: Client, others: Client[]): Promise<void> {
  const ours = await unwrap(listProjects({ client: gateway }));
  assert.equal(ours.projects.length, PROJECT_COUNT);
  for (const other of others)
    assert.deepEqual(await unwrap(listProjects({ client: other })), ours, 'other data answered');
}

/** What measure found: the figures, then lines of the gateway's breakdowns and of CPU use. */
interface Findings {
  measurements: Measurement[];
  breakdowns: string[];
  cpu: string[];
}

/** Most slices a target's time at one concurrency is cut into (each at least 1 s). */
const MAX_SLICES = 5;
/** The start of each slice that is run but not counted (see LoadRequest.settleSeconds). */
const SLICE_SETTLE_SECONDS = 0.25;

/** What the slices of one target at one concurrency gathered. */
interface TargetRun {
  target: Target;
  samples: LoadSample[];
  /** CPU milliseconds of each process group during this target's slices. */
  cpu: Map<string, number>;
  hopsBefore?: HopReading;
}

function loadOf(route: Route, target: Target) {
  return { url: target.url, headers: target.headers, scenario: route.scenario };
}

/** The discarded first runs (FIRST_WARMUP_SECONDS), every target in turn. */
async function warmUp(routes: Route[]): Promise<void> {
  const connections = Math.max(...CONCURRENCIES);
  for (const route of routes) {
    for (const target of route.targets) {
      console.error(`${route.name}: warming ${target.name} up, ${FIRST_WARMUP_SECONDS} s`);
      await runLoad({ ...loadOf(route, target), connections, seconds: FIRST_WARMUP_SECONDS });
    }
  }
}

/**
 * Runs every target of `route` for `seconds` in all, in slices taken in turn, each round
 * starting one target later. The machine's speed drifts (on this two-core virtual machine
 * the same work took twice the CPU time from one minute to the next), and a target run
 * in one block would carry its minute's speed into its ratio; in slices, every target
 * gets the same mix of fast and slow.
 */
async function runInSlices(
  route: Route,
  connections: number,
  seconds: number,
): Promise<TargetRun[]> {
  const slices = Math.min(MAX_SLICES, seconds);
  const sliceSeconds = Math.round(seconds / slices);
  const runs: TargetRun[] = [];
  for (const target of route.targets) {
    await runLoad({ ...loadOf(route, target), connections, seconds: WARMUP_SECONDS });
    const hopsBefore = await target.readHops?.();
    runs.push({ target, samples: [], cpu: new Map(), ...(hopsBefore ? { hopsBefore } : {}) });
  }
  for (let round = 0; round < slices; round += 1) {
    for (let i = 0; i < runs.length; i += 1) {
      const run = runs[(round + i) % runs.length];
      if (!run) continue;
      let cpuBefore: CpuReading | undefined;
      const load = {
        ...loadOf(route, run.target),
        connections,
        seconds: sliceSeconds,
        settleSeconds: SLICE_SETTLE_SECONDS,
      };
      run.samples.push(await runLoad(load, () => (cpuBefore = readCpu())));
      const cpuAfter = readCpu();
      if (cpuBefore && cpuAfter) addCpuUsed(run.cpu, cpuUsed(cpuBefore, cpuAfter));
    }
  }
  return runs;
}

async function measure(routes: Route[], seconds: number): Promise<Findings> {
  const measurements: Measurement[] = [];
  const breakdowns: string[] = [];
  const cpu: string[] = [];
  await warmUp(routes);
  for (const route of routes) {
    for (const connections of CONCURRENCIES) {
      console.error(`${route.name}: every target at ${connections} connection(s), ${seconds} s`);
      for (const { target, samples, cpu: used, hopsBefore } of await runInSlices(
        route,
        connections,
        seconds,
      )) {
        const figures = figuresOf(samples);
        measurements.push({ route: route.name, target: target.name, connections, figures });
        const label = `${route.name}, ${target.name} at ${connections} connection(s)`;
        const hopsAfter = await target.readHops?.();
        if (hopsBefore && hopsAfter)
          breakdowns.push(...formatHops(label, hopsBetween(hopsBefore, hopsAfter)));
        if (connections === CPU_PROFILED_CONCURRENCY && used.size > 0)
          cpu.push(...formatCpu(label, used, figures.loadCpuMs ?? 0, figures.answered));
      }
    }
  }
  return { measurements, breakdowns, cpu };
}

async function bench(seconds: number, cleanups: (() => Promise<void>)[]): Promise<string> {
  console.error('starting the stack');
  // The stack's readiness probes log each connect and each unanswered ping while the apps
  // boot; that is expected, and Stack.start throws if an app never answers.
  Logger.overrideLogger(['error']);
  const stack = await Stack.start({ env: STACK_ENV, isolated: true, output: 'files' });
  cleanups.push(() => stack.stop());
  // A second gateway that asks auth-service about the token on every request.
  const cold = await stack.startExtraGateway({ AUTH_CACHE_SECONDS: '0' });
  const owner = await signIn(new ApiClient(stack.baseUrl), 'bench-owner');
  const region = await seedProjects(owner);
  const databaseUrl = stack.env['DATABASE_URL'] ?? '';
  const baseline = await startBaseline(databaseUrl, owner.user.id, region);
  cleanups.unshift(() => baseline.close());
  const fastifyBaseline = await startBaseline(databaseUrl, owner.user.id, region, 'fastify');
  cleanups.unshift(() => fastifyBaseline.close());
  const floor = await startFloor(databaseUrl, stack.env['RABBITMQ_URL'] ?? '', owner.user.id);
  cleanups.unshift(() => floor.close());
  const bearer = { authorization: `Bearer ${owner.token}` };
  await verifySameData(owner.client, [
    testApi(baseline.url),
    testApi(fastifyBaseline.url),
    testApi(floor.url),
    testApi(cold.baseUrl, owner.token),
  ]);
  const services = [stack.managementUrl('project-service'), stack.managementUrl('auth-service')];
  const gateway = (name: string, baseUrl: string, route: string): Target => ({
    name: 'gateway',
    url: `${baseUrl}/projects`,
    headers: bearer,
    readHops: () => readHops(stack.managementUrl(name), route, services),
  });
  const { measurements, breakdowns, cpu } = await measure(
    [
      {
        name: 'GET /projects',
        scenario: 'list',
        targets: [
          gateway('api-gateway', stack.baseUrl, '/projects'),
          { name: 'floor', url: `${floor.url}/projects`, headers: {} },
          { name: 'baseline on Fastify', url: `${fastifyBaseline.url}/projects`, headers: {} },
          { name: BASELINE, url: `${baseline.url}/projects`, headers: {} },
        ],
      },
      {
        name: 'GET /projects, cold token',
        scenario: 'list',
        targets: [
          gateway(cold.name, cold.baseUrl, '/projects'),
          { name: BASELINE, url: `${baseline.url}/token-checked/projects`, headers: bearer },
        ],
      },
      {
        name: 'POST+DELETE /projects',
        scenario: 'create-delete',
        targets: [
          { name: 'gateway', url: `${stack.baseUrl}/projects`, headers: bearer },
          { name: BASELINE, url: `${baseline.url}/projects`, headers: {} },
        ],
      },
    ],
    seconds,
  );
  return [formatReport(measurements, BASELINE), '', ...breakdowns, '', ...cpu].join('\n');
}

await runBench(async (cleanups) => {
  const seconds = benchSeconds();
  console.log(
    `${PROJECT_COUNT} projects; each target ${seconds} s in all per concurrency, in up to ` +
      `${MAX_SLICES} slices taken in turn with the route's other targets (the first ` +
      `${SLICE_SETTLE_SECONDS} s of each not counted); ${FIRST_WARMUP_SECONDS} s of warm-up ` +
      'per target first; latencies in ms\n',
  );
  return bench(seconds, cleanups);
});
