// Part of `npm run lint`: every commit since this check came in has a subject of the form
// `area: what changed`, at most 72 characters, where the area is an app, a lib, `docs`,
// `deploy`, `bench` or `ci`, and a blank line between the subject and any body (the why
// and the figures go there). Commits before it are history and are left as they are.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_SUBJECT = 72;

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/** The areas a subject may name: the workspace's apps and libs, and four more. */
function areas() {
  const dirs = (parent) =>
    readdirSync(join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  return new Set([...dirs('apps'), ...dirs('libs'), 'docs', 'deploy', 'bench', 'ci']);
}

/** What is wrong with one commit message, if anything. */
export function messageProblems(message, known = areas()) {
  const [subject = '', second] = message.split('\n');
  const problems = [];
  if (subject.length > MAX_SUBJECT)
    problems.push(`subject of ${subject.length} characters (at most ${MAX_SUBJECT})`);
  const area = /^([a-z0-9-]+): \S/.exec(subject)?.[1];
  if (!area) problems.push('subject is not `area: what changed`');
  else if (!known.has(area))
    problems.push(`"${area}" is not an app, a lib, docs, deploy, bench or ci`);
  if (second !== undefined && second.trim() !== '')
    problems.push('no blank line between the subject and the body');
  return problems;
}

/** The commit that brought this check in: it and every later one are checked. */
function firstChecked() {
  try {
    return git('log', '--diff-filter=A', '--format=%H', '--', 'tools/commit-messages.mjs')
      .split('\n')
      .filter(Boolean)
      .at(-1);
  } catch {
    return undefined; // not a git checkout (an unpacked archive): nothing to check
  }
}

function main() {
  const first = firstChecked();
  if (!first) {
    console.log('commit messages: no history to check');
    return;
  }
  const known = areas();
  const hashes = git('rev-list', '--no-merges', `${first}^..HEAD`).split('\n').filter(Boolean);
  let failed = 0;
  for (const hash of hashes) {
    const problems = messageProblems(git('log', '-1', '--format=%B', hash), known);
    if (problems.length === 0) continue;
    failed += 1;
    console.error(`${hash.slice(0, 7)} ${git('log', '-1', '--format=%s', hash)}`);
    for (const problem of problems) console.error(`  ${problem}`);
  }
  if (failed > 0) {
    console.error(`\n${failed} commit message(s) break the convention (see docs/development.md)`);
    process.exit(1);
  }
  console.log(`commit messages: ${hashes.length} checked`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
