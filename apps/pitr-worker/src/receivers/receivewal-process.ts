import type { BackupSource } from '@pgcloud/contracts';
import type { OsUser } from '@pgcloud/postgres';
import { BASE_ENV, formatConninfo } from '@pgcloud/postgres';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const STDERR_KEPT_BYTES = 8 * 1024;
const STDERR_LINES_IN_ERRORS = 4;

/** How a pg_receivewal ended. */
export interface ReceivewalExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines it printed, for the log (it never prints the password). */
  stderr: string;
}

/** A running pg_receivewal. */
export interface ReceivewalProcess {
  pid: number | undefined;
  exited: Promise<ReceivewalExit>;
  stop(): void;
}

/** Where and how one pg_receivewal streams. */
export interface ReceivewalOptions {
  pgBinDir: string;
  osUser: OsUser;
  /** Where it writes segments; it starts at the segment of the `.partial` file there. */
  directory: string;
  source: BackupSource;
  /** A file with the CA's certificate, readable by the OS user. */
  caFile: string;
  /** How its connection shows in pg_stat_replication. */
  applicationName: string;
}

/**
 * Starts pg_receivewal without a slot of its own (the archive's slot is moved by what
 * reaches S3, not by what reaches our disk), syncing every write so its reported flush
 * position is on disk. Through setpriv it runs as the OS user when we are root, and dies
 * with us: a killed worker leaves no receiver streaming into its spool.
 */
export function startReceivewal(options: ReceivewalOptions): ReceivewalProcess {
  const { source } = options;
  const conninfo = formatConninfo([
    ['host', source.host],
    ['port', String(source.port)],
    ['user', source.user],
    ['sslmode', 'verify-full'],
    ['sslrootcert', options.caFile],
    ['application_name', options.applicationName],
    ['connect_timeout', '10'],
  ]);
  const asUser = options.osUser.switchUser
    ? [`--reuid=${options.osUser.uid}`, `--regid=${options.osUser.gid}`, '--clear-groups']
    : [];
  const child = spawn(
    'setpriv',
    [
      ...asUser,
      '--pdeathsig=KILL',
      '--',
      join(options.pgBinDir, 'pg_receivewal'),
      `--directory=${options.directory}`,
      `--dbname=${conninfo}`,
      '--synchronous',
      '--no-loop',
      '--no-password',
      '--status-interval=1',
      '--verbose',
    ],
    // The password goes by environment, never on the command line (ps shows that).
    {
      env: { ...BASE_ENV, PGPASSWORD: source.password },
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd: '/',
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_BYTES);
  });
  const exited = new Promise<ReceivewalExit>((resolve) => {
    child.once('error', (err) =>
      resolve({ code: null, signal: null, stderr: `could not start: ${err.message}` }),
    );
    child.once('close', (code, signal) =>
      resolve({
        code,
        signal,
        stderr: stderr.trim().split('\n').slice(-STDERR_LINES_IN_ERRORS).join(' | '),
      }),
    );
  });
  return {
    pid: child.pid,
    exited,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}
