// A point-in-time restore by hand, as an operator would with PostgreSQL's own tools: the
// base backup through its link and pgcloud's archived WAL from the bucket, then archive
// recovery to the target time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import {
  appendFile,
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import type { Client } from '@pgcloud/api-client';
import { getBackupDownload, unwrap } from '@pgcloud/api-client';
import { WAL_SEGMENT_BYTES, chownFile, resolveOsUser } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { DatabasePath } from '@pgcloud/bench-support';
import { downloadTrusting, untilPromoted } from '@pgcloud/bench-support';
import { RestoredByHand } from '@pgcloud/testing';
import { walObjects } from './wal-objects.js';
import { RESTORED_SQL } from './wal-writes.js';

// As many segments at once as pgcloud's restore fetches.
const PARALLEL_FETCHES = 8;

/** Where a restore by hand takes its base backup and WAL from. */
export interface HandSource {
  client: Client;
  /** The path parameters of the base backup: the database's, and its `backup_id`. */
  backupPath: DatabasePath & { backup_id: string };
  /** The certificate of the S3 the backup's link points to (HTTPS). */
  s3CaPem: string;
  bucket: ObjectStore;
  /** `projects/{project_id}/databases/{database_id}/wal/`. */
  walPrefix: string;
  /** The segment holding the base backup's start_lsn: replay needs none before it. */
  firstSegment: bigint;
  /** The database's name inside its server. */
  database: string;
}

/** Seconds from the start of a restore by hand to the end of each step, and what it got. */
export interface HandRestore {
  /** When it started (ms since the epoch): the steps follow from there. */
  startedAtMs: number;
  downloaded: number;
  extracted: number;
  promoted: number;
  segments: number;
  /** What the restored database answered to RESTORED_SQL. */
  answer: string;
}

/**
 * A point-in-time restore by hand, timed from its start: the base backup downloaded through
 * its link while the WAL segments come from S3 (8 at a time), `tar --zstd -x`, then
 * PostgreSQL's archive recovery with `restore_command = 'cp <dir>/%f %p'` to the target
 * time, promoted, until pg_is_in_recovery() is false.
 */
export async function restoreByHand(
  source: HandSource,
  targetTime: string,
  parent: string,
): Promise<HandRestore> {
  const startedAtMs = Date.now();
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const dir = await mkdtemp(join(parent, 'pgcloud-by-hand-'));
  try {
    await chmod(dir, 0o755);
    const walDir = join(dir, 'wal');
    await mkdir(walDir, { mode: 0o755 });
    const [archive, segments] = await Promise.all([
      downloadBase(source, dir),
      fetchWal(source, walDir),
    ]);
    const downloaded = seconds();
    const restored = await RestoredByHand.extract(archive, dir);
    try {
      const extracted = seconds();
      await rm(archive);
      await configureRecovery(restored.dataDir, walDir, targetTime);
      await restored.start();
      await untilPromoted(restored.address);
      const promoted = seconds();
      const answer = await restored.query(source.database, RESTORED_SQL);
      return { startedAtMs, downloaded, extracted, promoted, segments, answer };
    } catch (err) {
      const log = await readFile(join(restored.dir, 'server.log'), 'utf8').catch(() => '');
      throw new Error(
        `${(err as Error).message}\nserver log:\n${log.split('\n').slice(-15).join('\n')}`,
      );
    } finally {
      // A server that died in recovery makes pg_ctl stop fail; the folder goes below anyway.
      await restored.remove().catch(() => undefined);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function downloadBase(source: HandSource, dir: string): Promise<string> {
  const link = await unwrap(getBackupDownload({ client: source.client, path: source.backupPath }));
  const file = join(dir, 'backup.tar.zst');
  await downloadTrusting(link.download_url, file, source.s3CaPem);
  return file;
}

/** Fetches every segment replay needs into `walDir`; answers how many. */
async function fetchWal(source: HandSource, walDir: string): Promise<number> {
  const queue = walObjects(await source.bucket.list(source.walPrefix), source);
  const count = queue.length;
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const path = join(walDir, next.name);
      const { keys } = next;
      async function* objects(): AsyncGenerator<Buffer> {
        for (const key of keys) yield* await source.bucket.getStream(key);
      }
      if (next.compressed) await decompressInto(objects(), path);
      else await pipeline(objects, createWriteStream(path));
      // pg_receivewal keeps the segment it writes at full size; the upload holds its data.
      if (next.partial) await truncate(path, WAL_SEGMENT_BYTES);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_FETCHES }, worker));
  return count;
}

/** What zstd makes of a compressed segment's object as it comes, written to `path`. */
async function decompressInto(compressed: AsyncIterable<Buffer>, path: string): Promise<void> {
  const zstd = spawn('zstd', ['-d', '-q', '-f', '-o', path], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const closed = once(zstd, 'close') as Promise<[number | null]>;
  const [[code]] = await Promise.all([closed, pipeline(compressed, zstd.stdin)]);
  if (code !== 0) throw new Error(`zstd could not decompress ${path} (exit ${code})`);
}

/**
 * recovery.signal and the recovery settings, in the files PostgreSQL's OS user owns. The
 * backup's own settings archive into pgBackRest's repository: archiving is turned off, or
 * the copy's new timeline would land there.
 */
async function configureRecovery(
  dataDir: string,
  walDir: string,
  targetTime: string,
): Promise<void> {
  const osUser = await resolveOsUser(process.env['PG_OS_USER'] ?? 'postgres');
  const signal = join(dataDir, 'recovery.signal');
  await writeFile(signal, '');
  await chownFile(signal, osUser);
  const autoConf = join(dataDir, 'postgresql.auto.conf');
  // PostgreSQL reads a numeric zone offset, not ISO's `Z`.
  const target = targetTime.replace('T', ' ').replace(/Z$/, '+00:00');
  await appendFile(
    autoConf,
    [
      '',
      `archive_mode = off`,
      `restore_command = 'cp ${walDir}/%f %p'`,
      `recovery_target_time = '${target}'`,
      `recovery_target_inclusive = on`,
      `recovery_target_action = 'promote'`,
      '',
    ].join('\n'),
  );
  await chownFile(autoConf, osUser);
}
