import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ApiClient, freePort, WORKSPACE_ROOT } from '@pgcloud/testing';
import { stopLocalServers } from './local-servers.js';
import { daemonAnswers } from './http-answers.js';

const READY_TIMEOUT_MS = 60_000;
const KILL_AFTER_MS = 10_000;

/** Starts the built daemon (`apps/local-daemon/dist/main.js`) with these settings. */
export function spawnLocalDaemon(env: Record<string, string>): ChildProcess {
  const main = join(WORKSPACE_ROOT, 'apps', 'local-daemon', 'dist', 'main.js');
  return spawn(process.execPath, ['--enable-source-maps', main], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * A local daemon in a process of its own, for tests and benchmarks: its own port, token
 * file and data directory in the temp folder (short socket paths, reachable by
 * PostgreSQL's OS user wherever the checkout is), its log under `.data/logs/`. stop()
 * stops it, makes sure its PostgreSQL server is down, and removes its files.
 */
export class LocalDaemon {
  private constructor(
    private child: ChildProcess,
    /** Holds the token file and, unless the settings name a server, the data directory. */
    readonly rootDir: string,
    readonly env: Record<string, string>,
    readonly baseUrl: string,
    readonly logFile: string,
  ) {}

  /** Starts a daemon with these settings over its own, and waits until it answers. */
  static async start(name: string, env: Record<string, string> = {}): Promise<LocalDaemon> {
    const rootDir = await mkdtemp(join(tmpdir(), 'pgcloud-daemon-'));
    await chmod(rootDir, 0o755); // mkdtemp's 0700 would keep PostgreSQL's OS user out
    const settings = {
      DAEMON_PORT: String(await freePort()),
      DAEMON_PG_PORT: String(await freePort()),
      DAEMON_DATA_DIR: join(rootDir, 'data'),
      DAEMON_TOKEN_FILE: join(rootDir, 'config', 'daemon.token'),
      NO_COLOR: '1',
      ...env,
    };
    const stamp = new Date()
      .toISOString()
      .replace(/[-:.TZ]/g, '')
      .slice(0, 14);
    const logFile = join(WORKSPACE_ROOT, '.data', 'logs', 'local-daemon', `${name}-${stamp}.log`);
    const child = spawnLocalDaemon(settings);
    appendOutput(child, logFile);
    const baseUrl = `http://127.0.0.1:${settings.DAEMON_PORT}`;
    const daemon = new LocalDaemon(child, rootDir, settings, baseUrl, logFile);
    try {
      await daemon.waitReady();
    } catch (err) {
      await daemon.stop();
      throw err;
    }
    return daemon;
  }

  /** Stops the process (SIGTERM, as a person would) and starts it again on the same files. */
  async restart(): Promise<void> {
    await this.stopProcess();
    this.child = spawnLocalDaemon(this.env);
    appendOutput(this.child, this.logFile);
    await this.waitReady();
  }

  /** Stops the process alone (SIGTERM), leaving its files, for a test to look at them. */
  async stopProcess(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    await exited;
    clearTimeout(timer);
  }

  /** The token the daemon wrote on its first start. */
  async token(): Promise<string> {
    return (await readFile(this.env['DAEMON_TOKEN_FILE'] ?? '', 'utf8')).trim();
  }

  /** An API client that sends the daemon's token. */
  async api(): Promise<ApiClient> {
    return new ApiClient(this.baseUrl, await this.token());
  }

  /** Stops the daemon (SIGTERM), then any server it left running, then removes its files. */
  async stop(): Promise<void> {
    await this.stopProcess();
    await stopLocalServers(this.rootDir, this.env['PG_OS_USER']);
    await rm(this.rootDir, { recursive: true, force: true });
  }

  private async waitReady(): Promise<void> {
    const exited = new Promise<never>((_, reject) =>
      this.child.once('exit', (code, signal) =>
        reject(new Error(`the local daemon exited (${signal ?? code}); see ${this.logFile}`)),
      ),
    );
    exited.catch(() => undefined);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await daemonAnswers(this.baseUrl))) {
      if (Date.now() > deadline)
        throw new Error(`the local daemon did not answer within ${READY_TIMEOUT_MS / 1000} s`);
      await Promise.race([exited, delay(100)]);
    }
  }
}

function appendOutput(child: ChildProcess, file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const log = createWriteStream(file, { flags: 'a' });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
}
