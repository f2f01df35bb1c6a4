import 'reflect-metadata';
import { loadConfig } from './config.js';
import { startDaemon } from './daemon.js';

try {
  await startDaemon(loadConfig());
} catch (err) {
  // What stops the daemon at start is a setting or the machine: say which, without a trace.
  console.error(
    `local-daemon could not start: ${err instanceof Error ? err.message : String(err)}`,
  );
  process.exitCode = 1;
}
