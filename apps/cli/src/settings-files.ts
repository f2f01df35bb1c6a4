import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from './exit-codes.js';

/** What `pgcloud login` keeps: the token and the API it is good for. */
export interface Credentials {
  api_url: string;
  token: string;
  login?: string;
  email?: string;
  saved_at: string;
}

/** Choices that outlive one command: the current project of `pgcloud use`. */
export interface CliConfig {
  project?: string;
}

/** `$XDG_CONFIG_HOME/pgcloud` (default `~/.config/pgcloud`), as docs/cli.md says. */
export function configDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config');
  return join(base, 'pgcloud');
}

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDirectory(env), 'credentials.json');
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDirectory(env), 'config.json');
}

/** The parsed JSON file, or undefined when there is none. */
export function readJsonFile<T>(path: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CliError(
      EXIT.error,
      'BAD_FILE',
      `${path} is not valid JSON: remove it and try again`,
    );
  }
}

/**
 * Writes a JSON file readable by its owner only (0600), whole or not at all: a temporary
 * file made with that mode, then renamed over the old one.
 */
export function writePrivateJsonFile(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}

export function removeFile(path: string): boolean {
  try {
    rmSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
