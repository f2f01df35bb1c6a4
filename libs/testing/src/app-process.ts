import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, where `apps/` lives. */
export const WORKSPACE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Starts an app's built entry point (`apps/<app>/dist/main.js`) with these settings. */
export function spawnApp(app: string, env: Record<string, string>): ChildProcess {
  return spawn(
    process.execPath,
    ['--enable-source-maps', join(WORKSPACE_ROOT, 'apps', app, 'dist', 'main.js')],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** Appends a process's stdout and stderr to a log file (its folder made when missing). */
export function pipeToFile(child: ChildProcess, file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const log = createWriteStream(file, { flags: 'a' });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
}

/** Sends the signal and waits for the exit; SIGKILL after 10 s if it has not come. */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Rejects when the process exits, naming it: a race partner for readiness waits. */
export function exitOf(child: ChildProcess, name: string): Promise<never> {
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`${name} exited (${signal ?? code}) while starting; see its log`)),
    ),
  );
  exited.catch(() => undefined);
  return exited;
}
