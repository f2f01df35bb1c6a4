// `node --enable-source-maps tools/run-tests.mjs <concurrency> <times-file> <file>...`: runs
// the test files with node:test's run(), `concurrency` at a time in the order given (the
// `node --test` command line sorts them by path, which would start the longest e2e groups
// late), reporting with `spec` to stdout and with tools/suite-times.mjs to `times-file`.
// Exits 1 when a test or a file failed, or a file ran past FILE_TIMEOUT_MS. The files'
// processes inherit this one's node options (--enable-source-maps).
import { createWriteStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import suiteTimes from './suite-times.mjs';

// A file that hangs (a child process it leaked keeps it alive after its tests) fails at
// this, rather than holding the run until CI gives up on it: well past the longest e2e
// group, about 25 minutes.
const FILE_TIMEOUT_MS = 40 * 60_000;

const [concurrency, timesFile, ...files] = process.argv.slice(2);
let failed = false;
const events = run({ files, concurrency: Number(concurrency), timeout: FILE_TIMEOUT_MS });
events.on('test:fail', () => (failed = true));

const toConsole = new PassThrough({ objectMode: true });
const toFile = new PassThrough({ objectMode: true });
events.pipe(toConsole);
events.pipe(toFile);
const times = createWriteStream(timesFile);
toConsole.compose(new spec()).pipe(process.stdout);
toFile.compose(suiteTimes).pipe(times);
await finished(times);
process.exitCode = failed ? 1 : 0;
