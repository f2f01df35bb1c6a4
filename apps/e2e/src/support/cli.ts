import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from '@pgcloud/testing';

/** The built command line, run as a user's shell runs `pgcloud`. */
export const CLI_MAIN = join(WORKSPACE_ROOT, 'apps', 'cli', 'dist', 'main.js');

/** What one run of `pgcloud` did. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A person at a terminal with pgcloud: a home and config folder of their own (so the
 * credentials file is theirs alone), the API's address in PGCLOUD_API_URL, and nothing
 * else of this process's environment that pgcloud reads.
 */
export class CliUser {
  readonly home = mkdtempSync(join(tmpdir(), 'pgcloud-cli-'));
  readonly configHome = join(this.home, '.config');

  constructor(
    readonly apiUrl: string,
    readonly extraEnv: Record<string, string> = {},
  ) {}

  get credentialsFile(): string {
    return join(this.configHome, 'pgcloud', 'credentials.json');
  }

  env(more: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env['PATH'],
      HOME: this.home,
      XDG_CONFIG_HOME: this.configHome,
      PGCLOUD_API_URL: this.apiUrl,
      ...this.extraEnv,
      ...more,
    };
  }

  /** Runs `pgcloud ARGS` to its end (2 minutes at most). */
  run(args: string[], more: Record<string, string> = {}): Promise<CliRun> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [CLI_MAIN, ...args],
        { env: this.env(more), cwd: this.home, timeout: 120_000, maxBuffer: 64 << 20 },
        (error, stdout, stderr) => {
          const code = error ? (error as { code?: unknown }).code : 0;
          if (typeof code !== 'number') reject(error ?? new Error('no exit code'));
          else resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** Runs `pgcloud ARGS --json`, expects success, and answers what it printed. */
  async json<T>(args: string[], more: Record<string, string> = {}): Promise<T> {
    const run = await this.run([...args, '--json'], more);
    if (run.code !== 0)
      throw new Error(`pgcloud ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return JSON.parse(run.stdout) as T;
  }

  /** Starts `pgcloud ARGS` and leaves it running (for `login`, which waits for a person). */
  start(args: string[]): RunningCli {
    return new RunningCli(
      spawn(process.execPath, [CLI_MAIN, ...args], { env: this.env(), cwd: this.home }),
    );
  }

  /**
   * Runs `pgcloud ARGS` on a pseudo-terminal (util-linux `script`), as a person sees it:
   * answers everything written to the terminal, escape sequences included.
   */
  onTerminal(args: string[], more: Record<string, string> = {}): Promise<CliRun> {
    const command = [process.execPath, CLI_MAIN, ...args].map(shellQuote).join(' ');
    return new Promise((resolve, reject) => {
      execFile(
        'script',
        [
          '--quiet',
          '--flush',
          '--return',
          '--command',
          `stty cols 100 rows 30; ${command}`,
          '/dev/null',
        ],
        { env: { ...this.env(more), TERM: 'xterm-256color' }, cwd: this.home, timeout: 120_000 },
        (error, stdout, stderr) => {
          const code = error ? (error as { code?: unknown }).code : 0;
          if (typeof code !== 'number') reject(error ?? new Error('no exit code'));
          else resolve({ code, stdout, stderr });
        },
      );
    });
  }
}

/** A `pgcloud` process still running, whose output can be awaited. */
export class RunningCli {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => resolve(code ?? -1));
    });
  }

  /** Waits until stderr matches `pattern` (15 s at most) and answers the match. */
  async stderrMatch(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.stderr);
      if (match) return match;
      if (Date.now() > deadline)
        throw new Error(`stderr never matched ${pattern} in ${timeoutMs} ms: ${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * What a terminal shows after `raw` was written to it, line by line: each carriage return
 * goes back to the line's start, and an erase-line sequence clears it.
 */
export function screenOf(raw: string): string[] {
  const lines: string[] = [];
  for (const written of raw.replace(/\r\n/g, '\n').split('\n')) {
    let line = '';
    for (const part of written.split('\r')) {
      const erased = part.lastIndexOf('\x1b[2K');
      const text = erased >= 0 ? part.slice(erased + 4) : part;
      line = erased >= 0 ? text : text + line.slice(text.length);
    }
    lines.push(line);
  }
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines;
}
