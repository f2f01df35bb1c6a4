import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { BASE_ENV } from './os-user.js';
import { reserveWal } from './wal-reservation.js';

/** Where a base backup is taken from: a server's replication role, over TLS. */
export interface BaseBackupSource {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The CA that issued the server's certificate: the connection is verify-full. */
  caPem: string;
}

/** What pg_basebackup reports of a finished backup. */
export interface BaseBackupInfo {
  /** WAL position where replay of the backup begins, e.g. `0/2000028`. */
  startLsn: string;
  /** WAL position the backup must be replayed to, to be consistent. */
  endLsn: string;
  timeline: number;
}

/** A base backup being streamed: read `archive`; `finished` settles when pg_basebackup exits. */
export interface BaseBackupStream {
  /** One tar of the data directory (with backup_manifest and the WAL it needs), zstd. */
  archive: Readable;
  finished: Promise<BaseBackupInfo>;
  /** Stops pg_basebackup; `finished` then rejects. */
  cancel(): void;
}

/**
 * pg_basebackup's arguments for one zstd-compressed tar on stdout holding the WAL the
 * backup needs (`-X fetch`: stdout allows no streamed WAL, so startBaseBackup reserves
 * it first), after a fast checkpoint (without `-c fast` it may wait minutes for one). Also
 * what bench/ runs by hand.
 *
 * zstd compresses with `compressionThreads` threads of its own. Compression stays on the
 * client: the server's (`server-zstd`, which would also spare TLS the uncompressed bytes)
 * leaves pg_basebackup unable to put backup_manifest into a tar on stdout, and the
 * archive must hold it for pg_verifybackup.
 */
export function baseBackupArgs(compressionThreads: number): string[] {
  const workers = compressionThreads > 0 ? `:workers=${compressionThreads}` : '';
  return [
    '--pgdata=-',
    '--format=tar',
    '--wal-method=fetch',
    `--compress=client-zstd${workers}`,
    '--checkpoint=fast',
    '--no-sync',
    '--verbose',
  ];
}

const STDERR_KEPT_BYTES = 16 * 1024;
const STDERR_LINES_IN_ERRORS = 6;

/**
 * Starts pg_basebackup against `source`, streaming the archive to its stdout, with the
 * server's WAL reserved for the backup's whole run (wal-reservation.ts) and released when
 * pg_basebackup exits.
 */
export async function startBaseBackup(options: {
  pgBinDir: string;
  source: BaseBackupSource;
  applicationName?: string;
  /** zstd's threads (baseBackupArgs); 0, the default, compresses in pg_basebackup itself. */
  compressionThreads?: number;
  /** Stops pg_basebackup when aborted (a job that lost its lease), as cancel() does. */
  signal?: AbortSignal;
}): Promise<BaseBackupStream> {
  const { source, signal } = options;
  signal?.throwIfAborted();
  const reservation = await reserveWal(source);
  // libpq reads the CA only from a file; the directory is ours alone and removed at exit.
  const dir = await mkdtemp(join(tmpdir(), 'pgcloud-basebackup-')).catch(async (err) => {
    await reservation.release();
    throw err;
  });
  const caFile = join(dir, 'ca.pem');
  const setUp = writeFile(caFile, source.caPem, { mode: 0o600 }).then(() =>
    signal?.throwIfAborted(),
  );
  await setUp.catch(async (err) => {
    await Promise.all([reservation.release(), rm(dir, { recursive: true, force: true })]);
    throw err;
  });
  const conninfo = replicationConninfo(source, caFile, options.applicationName ?? 'pgcloud_backup');
  const child = spawn(
    join(options.pgBinDir, 'pg_basebackup'),
    [...baseBackupArgs(options.compressionThreads ?? 0), `--dbname=${conninfo}`],
    // The password goes by environment, never on the command line (ps shows that).
    {
      env: { ...BASE_ENV, PGPASSWORD: source.password },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(signal ? { signal, killSignal: 'SIGTERM' as const } : {}),
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT_BYTES);
  });
  const finished = new Promise<BaseBackupInfo>((resolve, reject) => {
    child.once('error', (err) =>
      reject(signal?.aborted && signal.reason instanceof Error ? signal.reason : err),
    );
    child.once('close', (code, signal) => {
      if (code === 0) {
        const info = parseBaseBackupLog(stderr);
        if (info) resolve(info);
        else reject(new Error('pg_basebackup did not report its WAL start and end points'));
        return;
      }
      const tail = stderr.trim().split('\n').slice(-STDERR_LINES_IN_ERRORS).join('\n');
      reject(new Error(`pg_basebackup exited with ${signal ?? code}: ${tail}`));
    });
  }).finally(() => Promise.all([reservation.release(), rm(dir, { recursive: true, force: true })]));
  return {
    archive: child.stdout,
    finished,
    cancel: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}

/**
 * The connection string of a replication client of `source` (pg_basebackup,
 * pg_receivewal): verify-full against the CA in `caFile`; the password goes by PGPASSWORD.
 */
export function replicationConninfo(
  source: Pick<BaseBackupSource, 'host' | 'port' | 'user'>,
  caFile: string,
  applicationName?: string,
): string {
  return formatConninfo([
    ['host', source.host],
    ['port', String(source.port)],
    ['user', source.user],
    ['sslmode', 'verify-full'],
    ['sslrootcert', caFile],
    ...(applicationName ? [['application_name', applicationName] as const] : []),
  ]);
}

/** Reads the WAL start point, timeline and end point from pg_basebackup's --verbose log. */
export function parseBaseBackupLog(log: string): BaseBackupInfo | undefined {
  const start = /write-ahead log start point: ([0-9A-F]+\/[0-9A-F]+) on timeline (\d+)/.exec(log);
  const end = /write-ahead log end point: ([0-9A-F]+\/[0-9A-F]+)/.exec(log);
  if (!start?.[1] || !start[2] || !end?.[1]) return undefined;
  return { startLsn: start[1], endLsn: end[1], timeline: Number(start[2]) };
}

/** A libpq connection string of `key='value'` pairs, each value quoted and escaped. */
export function formatConninfo(entries: readonly (readonly [string, string])[]): string {
  return entries
    .map(([key, value]) => `${key}='${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`)
    .join(' ');
}
