import { STACK_APPS, Stack, UP_APPS } from './stack.js';

/**
 * `npm run up`: the whole stack and the local daemon on this machine with prefixed logs,
 * until Ctrl-C. Uses the configured metadata database and queues, so data stays between
 * runs.
 */
export async function runUp(): Promise<void> {
  let stack: Stack;
  try {
    stack = await Stack.start({ isolated: false, output: 'console', apps: UP_APPS });
  } catch (err) {
    console.error(
      `\npgcloud could not start:\n${err instanceof Error ? err.message : String(err)}`,
    );
    process.exitCode = 1;
    return;
  }
  const s3 = stack.env['S3_ENDPOINT'] ?? process.env['S3_ENDPOINT'];
  console.log(
    `\npgcloud is up.\n  API:               ${stack.baseUrl}\n  Verification page: ${stack.env['PUBLIC_BASE_URL']}/device\n` +
      `  Local daemon:      http://127.0.0.1:${stack.env['DAEMON_PORT']} ` +
      '(token in DAEMON_TOKEN_FILE, default ~/.config/pgcloud/daemon.token)\n' +
      `  S3 (backups, WAL): ${s3} bucket ${stack.env['S3_BUCKET'] ?? process.env['S3_BUCKET'] ?? 'pgcloud'}\n` +
      `  Management ports (/livez, /readyz, /metrics):\n${managementList(stack)}\n` +
      `  Command line:      node apps/cli/dist/main.js login --api-url ${stack.baseUrl}\n` +
      '                     (or `npm install -g ./apps/cli` once, then `pgcloud login`; `pgcloud --help`)\n' +
      'Press Ctrl-C to stop.\n',
  );
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping pgcloud ...');
    const reraise = (): void => {
      // Cleanup done: end the way the signal would have ended us, with its exit status.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    };
    stack.stop().then(reraise, (err: unknown) => {
      console.error(err);
      reraise();
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function managementList(stack: Stack): string {
  return STACK_APPS.map((app) => `    ${app.padEnd(21)}${stack.managementUrl(app)}`).join('\n');
}
