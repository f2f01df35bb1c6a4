// `npm test`: lint, type check and build, then the unit, integration and e2e tests in one
// run of node's test runner (the e2e suite starts its stack once, in its own process).
import { execSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const step = (title, command) => {
  console.log(`\n== ${title}: ${command}`);
  execSync(command, { cwd: root, stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false' } });
};

function testFiles(dir, pattern, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') testFiles(path, pattern, found);
    else if (entry.isFile() && pattern.test(entry.name) && path.includes(`${join('dist', '')}`))
      found.push(relative(root, path));
  }
  return found;
}

const only = process.argv[2]; // unit | int | e2e, to run one kind
// Build first: type-aware lint reads the libraries' declarations from their dist/.
step('type check and build', 'npx tsc -b');
if (!only) step('lint', 'npm run lint');

const kinds = {
  unit: /\.spec\.js$/,
  int: /\.int-spec\.js$/,
  e2e: /\.e2e\.js$/,
};
const files = Object.entries(kinds)
  .filter(([kind]) => !only || kind === only)
  .flatMap(([, pattern]) =>
    ['libs', 'apps'].flatMap((dir) => testFiles(join(root, dir), pattern)).sort(),
  );
console.log(`\n== tests: ${files.length} files`);
const result = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-reporter=spec', ...files],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
