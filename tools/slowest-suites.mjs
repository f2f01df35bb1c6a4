// A reporter for node's test runner, beside `spec`: at the end of the run it prints the ten
// slowest suites (top-level describe blocks and tests, with their files), so the run's
// length stays visible as suites are added, then one closing line of the counts.
import { relative } from 'node:path';

const SHOWN = 10;

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`.padStart(8);

export default async function* slowestSuites(source) {
  const suites = [];
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, nesting, file, skip, todo, details } = event.data;
    if (nesting === 0) suites.push({ name, file, ms: details.duration_ms });
    if (details.type === 'suite') continue;
    if (skip || todo) counts.skipped += 1;
    else if (event.type === 'test:pass') counts.passed += 1;
    else counts.failed += 1;
  }
  const slowest = suites.sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
  const total = suites.reduce((sum, suite) => sum + suite.ms, 0);
  const lines = slowest.map(({ name, file, ms }) => {
    const where = file ? ` (${relative(process.cwd(), file)})` : '';
    return `${seconds(ms)}  ${name}${where}`;
  });
  yield (
    `\nThe ${slowest.length} slowest of ${suites.length} suites (${seconds(total).trim()} in all):\n` +
    `${lines.join('\n')}\n\n` +
    `tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`
  );
}
