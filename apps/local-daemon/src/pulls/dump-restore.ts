import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { PgTools, SocketAddress } from '@pgcloud/postgres';
import { BASE_ENV, SUPERUSER } from '@pgcloud/postgres';

const STDERR_KEPT_BYTES = 4096;

/** What libpq needs to reach a database: PGHOST, PGPORT, PGUSER, PGDATABASE, maybe PGPASSWORD. */
export type LibpqEnv = Record<string, string>;

/** What the copy takes from the archive's database: its objects and rows, no more. */
const DUMP_ARGS = [
  '--format=custom',
  '--no-owner',
  '--no-privileges',
  '--no-publications',
  '--no-subscriptions',
  '--no-security-labels',
  '--no-tablespaces',
];

/**
 * Copies `database` of the scratch server into the target that `target` names, with
 * pg_dump piped into pg_restore (both PostgreSQL's, as the OS user, no shell, nothing
 * staged on disk). Owners and grants are left behind: what is made belongs to the role
 * restoring, or to `role` when given (pg_restore's SET ROLE). One transaction: a failure
 * leaves the target as empty as it was.
 */
export async function copyDatabase(
  scratch: SocketAddress,
  database: string,
  target: LibpqEnv,
  tools: PgTools,
  role?: string,
): Promise<void> {
  const { osUser } = tools;
  const asUser = osUser.switchUser ? { uid: osUser.uid, gid: osUser.gid } : {};
  const dump = spawn(join(tools.binDir, 'pg_dump'), DUMP_ARGS, {
    cwd: '/',
    env: {
      ...BASE_ENV,
      PGHOST: scratch.socketDir,
      PGPORT: String(scratch.port),
      PGUSER: SUPERUSER,
      PGDATABASE: database,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...asUser,
  });
  const restoreArgs = [
    '--no-owner',
    '--no-privileges',
    '--single-transaction',
    '--exit-on-error',
    ...(role ? [`--role=${role}`] : []),
    `--dbname=${target['PGDATABASE']}`,
  ];
  const restore = spawn(join(tools.binDir, 'pg_restore'), restoreArgs, {
    cwd: '/',
    env: { ...BASE_ENV, ...target },
    stdio: ['pipe', 'ignore', 'pipe'],
    ...asUser,
  });
  dump.stdout.pipe(restore.stdin);
  // pg_restore gone early (an error): pg_dump's writes then fail, which is not the news.
  restore.stdin.on('error', () => undefined);
  const [dumped, restored] = await Promise.all([
    finished(dump, 'pg_dump'),
    finished(restore, 'pg_restore'),
  ]);
  if (restored) throw new Error(restored);
  if (dumped) throw new Error(dumped);
}

/** Resolves with what went wrong (the tool, its exit and its stderr's end), or undefined. */
function finished(child: ReturnType<typeof spawn>, label: string): Promise<string | undefined> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT_BYTES);
  });
  return new Promise((resolve) => {
    child.once('error', (err) => resolve(`${label} could not run: ${err.message}`));
    child.once('close', (code, signal) => {
      if (code === 0) return resolve(undefined);
      const how = code === null ? `was killed by ${signal}` : `exited with code ${code}`;
      resolve(`${label} ${how}: ${stderr.trim()}`);
    });
  });
}
