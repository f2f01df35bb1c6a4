// `npm test`: type check and build, lint, then every test; `npm test -- unit|int|e2e` runs
// one kind, `npm test -- <area>` (restores, gateway, kubernetes, ...) the unit, integration
// and e2e tests of one area. The tests run in two phases. First two lanes at once: the e2e
// groups that mostly wait (each group a process with a stack of its own), one after
// another; beside them lint, then the integration and unit files. Then the e2e group that
// loads the machine, alone. The run ends with the slowest suites and one line of counts.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASE_IMAGE, ensureBaseImage, ensureEngine } from './container-engine.mjs';
import { build, installDependencies } from './prepare.mjs';
import { summary } from './suite-times.mjs';
import {
  CEPH,
  CHROMIUM,
  DOCKER,
  DOCKER_COMPOSE,
  MMDEBSTRAP,
  PROMETHEUS,
  ensurePackages,
} from './system-packages.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const runStartedAt = Date.now();
const elapsed = () => `${((Date.now() - runStartedAt) / 60_000).toFixed(1)} min`;

function testFiles(dir, pattern, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') testFiles(path, pattern, found);
    else if (entry.isFile() && pattern.test(entry.name) && path.includes(`${join('dist', '')}`))
      found.push(relative(root, path));
  }
  return found;
}

const KINDS = ['unit', 'int', 'e2e'];
const argument = process.argv[2];
const kind = KINDS.includes(argument) ? argument : undefined;
const area = kind ? undefined : argument;
// On a fresh clone `npm test` comes first: install what `npm ci` would, then build (first,
// since type-aware lint reads the libraries' declarations from their dist/).
installDependencies();
console.log(`\n== type check and build (at ${elapsed()})`);
build();

const { AREAS, groupsOf, suitesOfArea, specMatchesArea } =
  await import('../apps/e2e/dist/groups.js');
const specs = (pattern) =>
  ['libs', 'apps', 'bench']
    .flatMap((dir) => testFiles(join(root, dir), pattern))
    .filter((file) => !area || specMatchesArea(file, area))
    .sort();
const unitFiles = !kind || kind === 'unit' ? specs(/\.spec\.js$/) : [];
const intFiles = !kind || kind === 'int' ? specs(/\.int-spec\.js$/) : [];
const suites = area ? suitesOfArea(area) : undefined;
const groups = !kind || kind === 'e2e' ? groupsOf(suites) : [];
if (unitFiles.length + intFiles.length + groups.length === 0) {
  const areas = AREAS.join(', ');
  console.error(`npm test: no tests of "${argument}"; kinds: ${KINDS.join(', ')}; areas: ${areas}`);
  process.exit(2);
}
const groupFile = (group) => join('apps', 'e2e', 'dist', 'groups', `${group.name}.e2e.js`);

// One local S3 (a single-node Ceph RGW) for the whole run, unless S3_ENDPOINT names one:
// every stack and integration test gets its own bucket in it.
let localS3;
let s3Env = {};
const stacks = intFiles.length + groups.length > 0;
const containers = groups.some((group) => group.containers);
// One apt-get run for all of them: promtool for the alerting rules' specs, the local S3,
// the browser test, the container suite.
ensurePackages(
  PROMETHEUS,
  ...(process.env.S3_ENDPOINT || !stacks ? [] : [CEPH]),
  ...(process.env.CHROMIUM_PATH || groups.length === 0 ? [] : [CHROMIUM]),
  ...(containers ? [DOCKER, DOCKER_COMPOSE, MMDEBSTRAP] : []),
);
if (stacks) {
  if (containers) {
    // The container suite builds the image from a local Debian base on this engine.
    console.log(`\n== Docker engine and the ${BASE_IMAGE} image (at ${elapsed()})`);
    mkdirSync(join(root, '.data', 'logs'), { recursive: true });
    ensureBaseImage(await ensureEngine(join(root, '.data', 'logs', 'dockerd.log')));
  }
  const { provideS3 } = await import('@pgcloud/devstack');
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 8);
  console.log(`\n== local S3 for this run, set S3_ENDPOINT to use another (at ${elapsed()})`);
  ({ env: s3Env, localS3 } = await provideS3(
    process.env,
    join(tmpdir(), `pgcloud-s3-${checkout}`),
  ));
}

const timesDir = join(root, '.data', 'test-times');
rmSync(timesDir, { recursive: true, force: true });
mkdirSync(timesDir, { recursive: true });
const env = {
  ...process.env,
  ...s3Env,
  ...(suites ? { PGCLOUD_E2E_SUITES: [...suites].join(',') } : {}),
};
const logDir = join(root, '.data', 'logs');
mkdirSync(logDir, { recursive: true });

/**
 * Runs test files one at a time with tools/run-tests.mjs (measured on two cores: the suites
 * are bound by the CPU, and two e2e groups side by side took every suite twice as long),
 * reporting to this console or to `logFile`; answers whether every file passed.
 */
function runTests(name, files, logFile) {
  const args = ['--enable-source-maps', join(root, 'tools', 'run-tests.mjs')];
  args.push('1', join(timesDir, `${name}.jsonl`), ...files);
  return runLogged(process.execPath, args, logFile);
}

/** Runs a command to its end, its output on this console or in `logFile`; true when it passed. */
function runLogged(command, args, logFile) {
  const output = logFile ? openSync(logFile, 'a') : 'inherit';
  const child = spawn(command, args, {
    cwd: root,
    env: { ...env, NX_DAEMON: 'false' },
    stdio: ['ignore', output, output],
  });
  return new Promise((resolve) => {
    child.once('error', (err) => {
      console.error(`npm test: ${command} could not run: ${err.message}`);
      resolve(false);
    });
    child.once('close', (code) => resolve(code === 0));
  });
}

/**
 * The lane beside the e2e groups: lint (a full run only), then the integration and unit
 * files, one at a time, reported to a log file that is printed when the lane ends.
 */
async function checksLane(logFile) {
  let passed = true;
  if (lint) passed = await runLogged('npm', ['run', 'lint'], logFile);
  const files = [...intFiles, ...unitFiles];
  if (files.length > 0) passed = (await runTests('checks', files, logFile)) && passed;
  return passed;
}

const startedAt = Date.now();
const waiting = groups.filter((g) => !g.alone).map(groupFile);
const loading = groups.filter((g) => g.alone).map(groupFile);
const lint = !argument;
let passed = true;
if (waiting.length > 0 && (lint || intFiles.length + unitFiles.length > 0)) {
  // Two lanes at once: the e2e groups on this console, the rest in a log file.
  const checksLog = join(logDir, 'checks-lane.log');
  rmSync(checksLog, { force: true });
  console.log(
    `\n== tests, two lanes at once (at ${elapsed()}): ${waiting.length} e2e groups here, and ` +
      `${lint ? 'lint, ' : ''}${intFiles.length + unitFiles.length} integration and unit ` +
      `files beside them (their report follows the groups')`,
  );
  const results = await Promise.all([runTests('e2e', waiting), checksLane(checksLog)]);
  console.log(`\n== ${lint ? 'lint, ' : ''}integration and unit tests (ended by ${elapsed()})\n`);
  console.log(readFileSync(checksLog, 'utf8'));
  passed = results.every(Boolean);
} else {
  if (lint) {
    console.log(`\n== lint (at ${elapsed()})`);
    passed = await runLogged('npm', ['run', 'lint']);
  }
  const files = [...waiting, ...intFiles, ...unitFiles];
  if (files.length > 0) {
    console.log(`\n== tests, one at a time (at ${elapsed()}): ${files.length} files`);
    passed = (await runTests('tests', files)) && passed;
  }
}
if (loading.length > 0) {
  console.log(`\n== tests, e2e groups that load the machine, alone (at ${elapsed()})`);
  passed = (await runTests('load', loading)) && passed;
}
await localS3?.destroy();

const lines = readdirSync(timesDir).flatMap((file) =>
  readFileSync(join(timesDir, file), 'utf8').split('\n'),
);
const { counts, text } = summary(lines, 10, root);
const minutes = ((Date.now() - startedAt) / 60_000).toFixed(1);
console.log(`\n${text}\nThe tests took ${minutes} min; npm test ${elapsed()} in all.\n`);
console.log(`tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
process.exit(!passed || counts.failed > 0 ? 1 : 0);
