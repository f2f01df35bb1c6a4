// `npm test`: lint, type check and build, then every test; `npm test -- unit|int|e2e` runs
// one kind, `npm test -- <area>` (restores, gateway, kubernetes, ...) the unit, integration
// and e2e tests of one area. Tests run in two phases of node's test runner: first the e2e
// groups that mostly wait (each group a process with a stack of its own) and the unit and
// integration files, TEST_CONCURRENCY at a time, then the e2e group that loads the machine.
// The run ends with the slowest suites of both phases and one line of counts.
import { execSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
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
  ensurePackages,
} from './system-packages.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const step = (title, command) => {
  console.log(`\n== ${title} (at ${elapsed()}): ${command}`);
  execSync(command, { cwd: root, stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false' } });
};
/**
 * Test files run at once in the first phase (TEST_CONCURRENCY): by default one per two
 * cores. The suites are bound by the CPU (Node apps, PostgreSQL, the local S3: 83% of both
 * cores over a run, by process accounting), not by waiting. Measured on two cores: two at
 * a time took the tests from about 30 to 28.9 minutes while every suite took twice as long
 * (PITR restores 131 s alone, 305 s beside another group).
 */
const SIDE_BY_SIDE = Number(
  process.env.TEST_CONCURRENCY ?? Math.max(1, Math.floor(availableParallelism() / 2)),
);
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
if (!argument) step('lint', 'npm run lint');

const { AREAS, groupsOf, suitesOfArea, specMatchesArea } =
  await import('../apps/e2e/dist/groups.js');
const specs = (pattern) =>
  ['libs', 'apps']
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
if (intFiles.length + groups.length > 0) {
  const containers = groups.some((group) => group.containers);
  // One apt-get run for all of them: the local S3, the browser test, the container suite.
  ensurePackages(
    ...(process.env.S3_ENDPOINT ? [] : [CEPH]),
    ...(process.env.CHROMIUM_PATH || groups.length === 0 ? [] : [CHROMIUM]),
    ...(containers ? [DOCKER, DOCKER_COMPOSE, MMDEBSTRAP] : []),
  );
  if (containers) {
    // The container suite builds the image from a local Debian base on this engine.
    console.log(`\n== Docker engine and the ${BASE_IMAGE} image (at ${elapsed()})`);
    mkdirSync(join(root, '.data', 'logs'), { recursive: true });
    ensureBaseImage(await ensureEngine(join(root, '.data', 'logs', 'dockerd.log')));
  }
  const { provideS3 } = await import('@pgcloud/testing');
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
const phases = [
  {
    title: `${SIDE_BY_SIDE} at a time`,
    concurrency: SIDE_BY_SIDE,
    files: [...groups.filter((g) => !g.alone).map(groupFile), ...intFiles, ...unitFiles],
  },
  {
    title: 'e2e groups that load the machine, one at a time',
    concurrency: 1,
    files: groups.filter((g) => g.alone).map(groupFile),
  },
].filter((phase) => phase.files.length > 0);

let failed = false;
const startedAt = Date.now();
for (const [index, phase] of phases.entries()) {
  console.log(`\n== tests, ${phase.title} (at ${elapsed()}): ${phase.files.length} files`);
  const result = spawnSync(
    process.execPath,
    [
      '--enable-source-maps',
      join(root, 'tools', 'run-tests.mjs'),
      String(phase.concurrency),
      join(timesDir, `phase-${index + 1}.jsonl`),
      ...phase.files,
    ],
    { cwd: root, stdio: 'inherit', env },
  );
  if (result.status !== 0) failed = true;
}
await localS3?.destroy();

const lines = readdirSync(timesDir).flatMap((file) =>
  readFileSync(join(timesDir, file), 'utf8').split('\n'),
);
const { counts, text } = summary(lines, 10, root);
const minutes = ((Date.now() - startedAt) / 60_000).toFixed(1);
console.log(`\n${text}\nThe tests took ${minutes} min; npm test ${elapsed()} in all.\n`);
console.log(`tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
process.exit(failed || counts.failed > 0 ? 1 : 0);
