import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The node command line that runs an app from its build output. */
export function appCommand(app: string): string[] {
  return [process.execPath, '--enable-source-maps', join(ROOT, 'apps', app, 'dist', 'main.js')];
}

/**
 * How a Stack runs an app as a node process: with `env` over `defaults`, this process's
 * environment between them; `fileSizeLimitKiB` runs it under `ulimit -f`.
 */
export function nodeRun(
  app: string,
  env: Record<string, string>,
  fileSizeLimitKiB: number | undefined,
  defaults: Record<string, string>,
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const node = appCommand(app);
  // exec keeps the pid: signals sent to the child reach node itself.
  const [command = '', ...args] =
    fileSizeLimitKiB === undefined
      ? node
      : ['sh', '-c', `ulimit -f ${fileSizeLimitKiB} && exec "$@"`, 'sh', ...node];
  return { command, args, env: { ...defaults, ...process.env, ...env } };
}

/** How an app that stopped by itself ended, and everything it wrote (stdout and stderr). */
export interface AppExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/**
 * Runs an app that is expected to stop by itself, such as one refusing its settings at
 * start, with `env` over this process's environment, and answers once it has exited and
 * its output is read to the end. One still running after `timeoutMs` is killed, and that
 * is an error carrying what it wrote.
 */
export function runAppToCompletion(
  app: string,
  env: Record<string, string>,
  { timeoutMs = 30_000 }: { timeoutMs?: number } = {},
): Promise<AppExit> {
  const [command = '', ...args] = appCommand(app);
  const child = spawn(command, args, {
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    // 'close' comes once the process has exited and both pipes are read to their end.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut)
        reject(new Error(`${app} was still running after ${timeoutMs} ms; it wrote:\n${output}`));
      else resolve({ code, signal, output });
    });
  });
}
