import { access, open, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ErrorDetail } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { PgTools, SocketAddress } from '@pgcloud/postgres';
import {
  chownFile,
  ensureOwnedDir,
  extractArchive,
  renderConf,
  renderHbaRules,
  runPgTool,
  startPostmaster,
  stopCluster,
} from '@pgcloud/postgres';

/** Where one pull works, under DAEMON_DATA_DIR/pulls: removed whatever happens. */
export interface ScratchPaths {
  workDir: string;
  pgdata: string;
  socketDir: string;
  logFile: string;
}

// Only the socket, in a 0700 directory: nothing but the daemon reaches the scratch server.
const SCRATCH_PORT = 5432;
const HEADER = "Written by pgcloud's local daemon for a pull; removed with the data.";
// Replay of the backup's WAL to its end: long for a large database, but bounded.
const START_TIMEOUT_MS = 30 * 60_000;

export function scratchPaths(workDir: string): ScratchPaths {
  return {
    workDir,
    pgdata: join(workDir, 'pgdata'),
    socketDir: join(workDir, 'sock'),
    logFile: join(workDir, 'server.log'),
  };
}

export function scratchAddress(paths: ScratchPaths): SocketAddress {
  return { socketDir: paths.socketDir, port: SCRATCH_PORT };
}

/**
 * Extracts a cloud backup (a zstd tar of a data directory with the WAL it needs) into the
 * scratch data directory while hashing it; a file that cannot be read, whose SHA-256 is
 * not `checksumSha256`, or that is no PostgreSQL data directory of the binaries' major
 * version is a VALIDATION_ERROR naming the field.
 */
export async function extractBackup(
  archive: { path: string; checksumSha256: string },
  paths: ScratchPaths,
  tools: PgTools,
): Promise<void> {
  await ensureOwnedDir(paths.pgdata, tools.osUser);
  await ensureOwnedDir(paths.socketDir, tools.osUser);
  const file = await open(archive.path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw invalid('fromArchive.path', `cannot be read by the daemon (${err.code ?? err.message})`);
  });
  const extracted = await extractArchive(
    file.createReadStream({ autoClose: false }),
    paths.pgdata,
    tools.osUser,
  )
    .catch((err: NodeJS.ErrnoException) => {
      throw invalid(
        'fromArchive.path',
        `cannot be read by the daemon (${err.code ?? err.message})`,
      );
    })
    .finally(() => file.close());
  if (extracted.sha256 !== archive.checksumSha256)
    throw invalid(
      'fromArchive.checksumSha256',
      `does not match the file: its ${extracted.bytes} bytes have SHA-256 ${extracted.sha256}`,
    );
  if (extracted.tarError)
    throw invalid('fromArchive.path', `is not a backup archive (tar: ${extracted.tarError})`);
  const version = await readFile(join(paths.pgdata, 'PG_VERSION'), 'utf8').catch(() => undefined);
  if (version === undefined)
    throw invalid('fromArchive.path', 'holds no PostgreSQL data directory');
  const local = await binariesMajor(tools);
  if (version.trim() !== local)
    throw invalid(
      'fromArchive.path',
      `holds PostgreSQL ${version.trim()} data; this daemon's server binaries are PostgreSQL ${local}`,
    );
}

/**
 * Starts the scratch server on the extracted data with settings of its own (the cloud
 * server's files name its port, certificates and libraries): the socket only, trusted in
 * its 0700 directory, no TLS, no durability (the data is thrown away). With the backup's
 * backup_label and WAL in place, it replays to the backup's end before it takes sessions.
 */
export async function startScratch(paths: ScratchPaths, tools: PgTools): Promise<SocketAddress> {
  const { osUser } = tools;
  const address = scratchAddress(paths);
  const settings = {
    listen_addresses: '',
    port: SCRATCH_PORT,
    unix_socket_directories: paths.socketDir,
    unix_socket_permissions: '0700',
    ssl: 'off',
    max_connections: 10,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    autovacuum: 'off',
    logging_collector: 'off',
    log_destination: 'stderr',
  };
  const files = {
    'postgresql.conf': renderConf(settings, HEADER),
    'postgresql.auto.conf': `# ${HEADER}\n`,
    'pg_hba.conf': renderHbaRules([['local', 'all', 'all', '', 'trust']], HEADER),
    'pg_ident.conf': `# ${HEADER}\n`,
  };
  for (const [name, text] of Object.entries(files)) {
    const path = join(paths.pgdata, name);
    await writeFile(path, text, { mode: 0o600 });
    await chownFile(path, osUser, 0o600);
  }
  // A backup holds neither, but a data directory copied by other means might.
  for (const signal of ['standby.signal', 'recovery.signal'])
    await rm(join(paths.pgdata, signal), { force: true });
  await startPostmaster(paths.pgdata, {
    binDir: tools.binDir,
    osUser,
    logFile: paths.logFile,
    timeoutMs: START_TIMEOUT_MS,
  }).catch(async (err: Error) => {
    const log = await readFile(paths.logFile, 'utf8').catch(() => '');
    const tail = log.trim().split('\n').slice(-6).join('\n');
    throw new Error(`the archive's data did not start: ${err.message}\n${tail}`);
  });
  return address;
}

/** Stops the scratch server if it runs, and removes every file of the pull. */
export async function removeScratch(paths: ScratchPaths, tools: PgTools): Promise<void> {
  const pid = await access(join(paths.pgdata, 'postmaster.pid')).then(
    () => true,
    () => false,
  );
  if (pid) await stopCluster({ pgdata: paths.pgdata, address: scratchAddress(paths) }, tools);
  await rm(paths.workDir, { recursive: true, force: true });
}

/** Removes what pulls cut short by a crash of the daemon left under `root`. */
export async function removeLeftScratch(root: string, tools: PgTools): Promise<number> {
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names) await removeScratch(scratchPaths(join(root, name)), tools);
  return names.length;
}

async function binariesMajor(tools: PgTools): Promise<string> {
  const { stdout } = await runPgTool(tools.binDir, 'postgres', ['--version'], {
    osUser: tools.osUser,
  });
  const major = /PostgreSQL\)? (\d+)/.exec(stdout)?.[1];
  if (!major) throw new Error(`cannot read the server binaries' version from "${stdout.trim()}"`);
  return major;
}

export function invalid(field: string, message: string): DomainError {
  const detail: ErrorDetail = { field, message: `${field} ${message}` };
  return new DomainError('VALIDATION_ERROR', 'The request is not valid.', [detail]);
}
