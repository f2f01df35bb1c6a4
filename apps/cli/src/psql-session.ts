import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './exit-codes.js';

/** The psql command line and environment of one session. */
export interface PsqlInvocation {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * How to run psql on a connection string so that it verifies the server against the
 * deployment's CA (`sslmode=verify-full`, whatever the string said). The password goes in
 * PGPASSWORD rather than on the command line, where any user of the machine could read it.
 */
export function psqlInvocation(options: {
  connectionString: string;
  caFile: string;
  extraArgs: readonly string[];
  env: NodeJS.ProcessEnv;
}): PsqlInvocation {
  let url: URL;
  try {
    url = new URL(options.connectionString);
  } catch {
    throw new CliError(EXIT.error, 'BAD_CONNECTION_STRING', 'the API answered a malformed URL');
  }
  const password = decodeURIComponent(url.password);
  url.password = '';
  url.searchParams.set('sslmode', 'verify-full');
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    PGSSLMODE: 'verify-full',
    PGSSLROOTCERT: options.caFile,
  };
  if (password) env['PGPASSWORD'] = password;
  return { command: 'psql', args: ['--dbname', url.toString(), ...options.extraArgs], env };
}

/**
 * Runs `work` with the CA certificate in a file only this user can read (0600, in a 0700
 * directory), and removes it afterwards, whatever happened.
 */
export async function withCaFile<T>(pem: string, work: (path: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), 'pgcloud-ca-'));
  try {
    const path = join(directory, 'ca.pem');
    await writeFile(path, pem, { mode: 0o600, flag: 'wx' });
    return await work(path);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Runs psql on this terminal and answers its exit code (128 + the signal's number when a
 * signal ended it). Ctrl-C belongs to psql (it cancels the query), so pgcloud ignores
 * SIGINT while psql runs.
 */
export async function runPsql(invocation: PsqlInvocation): Promise<number> {
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  try {
    return await new Promise<number>((resolve, reject) => {
      const child = spawn(invocation.command, invocation.args, {
        env: invocation.env,
        stdio: 'inherit',
      });
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'ENOENT'
            ? new CliError(
                EXIT.error,
                'PSQL_NOT_FOUND',
                'psql is not installed or not on PATH: install the PostgreSQL client ' +
                  '(for example `apt install postgresql-client` or `brew install libpq`), ' +
                  'or connect with the string of `pgcloud db url`',
              )
            : error,
        ),
      );
      child.once('exit', (code, signal) =>
        resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)),
      );
    });
  } finally {
    process.off('SIGINT', ignore);
  }
}
