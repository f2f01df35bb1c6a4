// A reporter for node's test runner, beside `spec`: one JSON line per finished top-level
// suite (its name, file and time) and per finished test (passed, failed or skipped), so
// tools/test.mjs can add up runs made in phases and print the slowest suites at the end.
export default async function* suiteTimes(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, nesting, file, skip, todo, details } = event.data;
    if (nesting === 0) yield `${JSON.stringify({ suite: name, file, ms: details.duration_ms })}\n`;
    if (details.type === 'suite') continue;
    const outcome = skip || todo ? 'skipped' : event.type === 'test:pass' ? 'passed' : 'failed';
    yield `${JSON.stringify({ test: outcome })}\n`;
  }
}

/** The slowest suites and the counts of every test, from the lines of one or more runs. */
export function summary(lines, shown = 10, cwd = process.cwd()) {
  const suites = [];
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const line of lines) {
    if (!line.trim()) continue;
    const record = JSON.parse(line);
    if (record.suite !== undefined) suites.push(record);
    else counts[record.test] += 1;
  }
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
  const slowest = suites.sort((a, b) => b.ms - a.ms).slice(0, shown);
  const total = suites.reduce((sum, suite) => sum + suite.ms, 0);
  const rows = slowest.map(({ suite, file, ms }) => {
    const where = file ? ` (${file.startsWith(cwd) ? file.slice(cwd.length) : file})` : '';
    return `${seconds(ms)}  ${suite}${where}`;
  });
  return {
    counts,
    text:
      `The ${slowest.length} slowest of ${suites.length} suites (${seconds(total).trim()} of ` +
      `suite time in all):\n${rows.join('\n')}`,
  };
}
