import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { constants } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';

/** How a container's process ended, as the kubelet reports it in `state.terminated`. */
export interface Termination {
  exitCode: number;
  reason: 'Completed' | 'Error' | 'StartError';
  message?: string;
  finishedAt: string;
}

/** What starting one container's process takes. */
export interface ContainerLaunch {
  /** command then args: the first is the program (looked up on the env's PATH). */
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Where its stdout and stderr go (appended). */
  logFile: string;
  /** The local file standing in for its terminationMessagePath. */
  terminationFile: string;
  /** FallbackToLogsOnError: a failure with an empty termination file reports the log's end. */
  fallbackToLogs: boolean;
}

// The kubelet's limits: 4096 bytes of termination message, and for the fallback the
// last 80 lines, at most 2048 bytes, of the log.
const MESSAGE_BYTES = 4096;
const FALLBACK_LINES = 80;
const FALLBACK_BYTES = 2048;
const TAIL_KEPT = 64 * 1024;

/**
 * One container's process, run as a local process in a process group of its own (the
 * stand-in for the container). When the main process ends, whatever it left in its group
 * is killed, as a container's end takes all its processes. What a real runtime does
 * differently: its own filesystem, user, network and PID namespaces, cgroup limits.
 */
export class ContainerProcess {
  /** Resolves once the process has ended (never rejects). */
  readonly ended: Promise<Termination>;
  private tail = '';
  private finished = false;

  private constructor(
    private readonly child: ChildProcess,
    launch: ContainerLaunch,
  ) {
    this.ended = this.watch(launch);
  }

  /** Starts the process; a program that cannot run ends with reason StartError. */
  static start(launch: ContainerLaunch): ContainerProcess {
    const [file = '', ...args] = launch.argv;
    const child = spawn(file, args, {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    return new ContainerProcess(child, launch);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Sends SIGTERM to the main process (as the kubelet does to a container's PID 1) and,
   * if it has not ended after `graceMs`, SIGKILL to its whole group. Resolves when ended.
   */
  async terminate(graceMs: number): Promise<Termination> {
    if (this.finished) return this.ended;
    this.signal('SIGTERM', false);
    const ended = await Promise.race([this.ended, delay(graceMs, undefined)]);
    if (ended) return ended;
    this.signal('SIGKILL', true);
    return this.ended;
  }

  private async watch(launch: ContainerLaunch): Promise<Termination> {
    const log = createWriteStream(launch.logFile, { flags: 'a' });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      stream?.on('data', (chunk: Buffer) => {
        log.write(chunk);
        this.tail = (this.tail + chunk.toString('utf8')).slice(-TAIL_KEPT);
      });
    }
    const outcome = await new Promise<{
      code: number | null;
      signal: string | null;
      error?: Error;
    }>((resolve) => {
      this.child.once('error', (error) => resolve({ code: null, signal: null, error }));
      this.child.once('close', (code, signal) => resolve({ code, signal }));
    });
    this.signal('SIGKILL', true);
    this.finished = true;
    await new Promise<void>((resolve) => log.end(() => resolve()));
    const finishedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    if (outcome.error)
      return { exitCode: 128, reason: 'StartError', message: outcome.error.message, finishedAt };
    const exitCode =
      outcome.code ??
      128 + (constants.signals[outcome.signal as keyof typeof constants.signals] ?? 0);
    let message = await readStart(launch.terminationFile, MESSAGE_BYTES);
    if (!message && exitCode !== 0 && launch.fallbackToLogs) message = this.logEnd();
    return {
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      ...(message ? { message } : {}),
      finishedAt,
    };
  }

  private logEnd(): string {
    const lines = this.tail.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const text = lines.slice(-FALLBACK_LINES).join('\n');
    const bytes = Buffer.from(text, 'utf8');
    return bytes.length <= FALLBACK_BYTES
      ? text
      : bytes.subarray(bytes.length - FALLBACK_BYTES).toString('utf8');
  }

  private signal(signal: NodeJS.Signals, group: boolean): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(group ? -pid : pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
}

async function readStart(file: string, bytes: number): Promise<string> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
