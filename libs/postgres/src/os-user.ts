import { spawn } from 'node:child_process';
import { chmod, chown, mkdir, open } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';

/** The OS account PostgreSQL's binaries run as, and whether we must switch to it. */
export interface OsUser {
  name: string;
  uid: number;
  gid: number;
  /** True when we run as root and start every PostgreSQL binary as this user. */
  switchUser: boolean;
}

/** Options of a command run as the OS user. */
export interface RunAsOptions {
  osUser: OsUser;
  env?: Record<string, string>;
  /** Defaults to `/`, which every user can enter (initdb warns in a directory it cannot). */
  cwd?: string;
  /** The command is killed past this (default 5 minutes): a hung tool must not hold a job forever. */
  timeoutMs?: number;
  /** Kills the command when aborted (a job that lost its lease): it fails with the signal's reason. */
  signal?: AbortSignal;
}

const DEFAULT_TOOL_TIMEOUT_MS = 5 * 60_000;

/** What a finished command printed. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
}

// Children (PostgreSQL tools) get a fixed, minimal environment: an inherited PGHOST, PGPASSWORD or LANG
// must not change what a tool does, and nothing secret should reach it by accident.
export const BASE_ENV: Record<string, string> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  LC_ALL: 'C',
};
const STDERR_LINES_IN_ERRORS = 8;

/**
 * Resolves the account PostgreSQL runs as: `name` (PG_OS_USER) when we are root, since
 * initdb and postgres refuse root; otherwise ourselves, as we cannot switch users.
 */
export async function resolveOsUser(name: string): Promise<OsUser> {
  if (process.getuid?.() !== 0) {
    return {
      name: userInfo().username,
      uid: process.getuid?.() ?? 0,
      gid: process.getgid?.() ?? 0,
      switchUser: false,
    };
  }
  const root: OsUser = { name: 'root', uid: 0, gid: 0, switchUser: false };
  const ids = await Promise.all(
    ['-u', '-g'].map((flag) =>
      runAsOsUser('id', [flag, name], { osUser: root }).then(
        (out) => Number(out.stdout.trim()),
        () => NaN,
      ),
    ),
  );
  const [uid, gid] = ids;
  if (!Number.isInteger(uid) || !Number.isInteger(gid))
    throw new Error(`the OS user '${name}' (PG_OS_USER) does not exist on this machine`);
  if (uid === 0) throw new Error(`PG_OS_USER must not be root: PostgreSQL refuses to run as root`);
  return { name, uid, gid, switchUser: true };
}

/** Runs a PostgreSQL binary (initdb, pg_ctl, ...) from `binDir` as the OS user. */
export function runPgTool(
  binDir: string,
  tool: string,
  args: readonly string[],
  options: RunAsOptions,
): Promise<CommandOutput> {
  return runAsOsUser(join(binDir, tool), args, options, tool);
}

/**
 * Runs a program without a shell as the OS user, capturing its output. Fails with the
 * program, its exit code and the end of its stderr; arguments are never echoed, so
 * callers must keep secrets out of them anyway.
 */
export function runAsOsUser(
  file: string,
  args: readonly string[],
  options: RunAsOptions,
  label = file,
): Promise<CommandOutput> {
  const { osUser, signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const child = spawn(file, args, {
      cwd: options.cwd ?? '/',
      env: { ...BASE_ENV, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      ...(signal ? { signal } : {}),
      ...(osUser.switchUser ? { uid: osUser.uid, gid: osUser.gid } : {}),
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', (err) => {
      // Aborted: node killed the child (killSignal) and reports an AbortError.
      if (signal?.aborted) return reject(abortReason(signal));
      reject(new Error(`${label} could not run: ${err.message}`));
    });
    // 'close' waits for the pipes: a daemon must not inherit them (pg_ctl start needs -l).
    child.once('close', (code, killedBy) => {
      const output = {
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      };
      if (code === 0) return resolve(output);
      reject(new CommandError(label, code, killedBy, output));
    });
  });
}

/** A command that exited with a failure: its name, exit code and output. */
export class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly output: CommandOutput,
  ) {
    const tail = lastLines(output.stderr || output.stdout, STDERR_LINES_IN_ERRORS);
    const status = exitCode === null ? `was killed by ${signal}` : `exited with code ${exitCode}`;
    super(`${command} ${status}${tail ? `: ${tail}` : ''}`);
    this.name = 'CommandError';
  }
}

/** Why `signal` was aborted, as an Error. */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(String(reason));
}

function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

/** Makes a directory (and its parents) and gives it to the OS user with `mode` (0700). */
export async function ensureOwnedDir(path: string, osUser: OsUser, mode = 0o700): Promise<void> {
  await mkdir(path, { recursive: true });
  await chmod(path, mode);
  if (osUser.switchUser) await chown(path, osUser.uid, osUser.gid);
}

/** Gives a file to the OS user with `mode` (0600 for keys: PostgreSQL refuses looser). */
export async function chownFile(path: string, osUser: OsUser, mode = 0o600): Promise<void> {
  await chmod(path, mode);
  if (osUser.switchUser) await chown(path, osUser.uid, osUser.gid);
}

/** Flushes a file, or a directory's entries (a rename into it), to disk: a crash keeps them. */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Throws when the OS user cannot enter `dir`, e.g. a checkout under a mode-700 home
 * directory: PostgreSQL would otherwise fail later with a bare permission error.
 */
export async function assertReachable(dir: string, osUser: OsUser, setting: string): Promise<void> {
  const reachable = await runAsOsUser('test', ['-x', dir], { osUser }).then(
    () => true,
    () => false,
  );
  if (!reachable) {
    throw new Error(
      `${setting} (${dir}) is out of reach of the OS user '${osUser.name}' that runs PostgreSQL: ` +
        `every directory on the way must be searchable by it (chmod o+x), or set ${setting} ` +
        `to a directory it can reach`,
    );
  }
}
