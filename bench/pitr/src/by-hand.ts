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
import { WAL_SEGMENT_BYTES, chownFile, parseSegmentName, resolveOsUser } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { DatabasePath } from '@pgcloud/bench-support';
import { RestoredByHand, downloadArchive } from '@pgcloud/testing';
import { pollUntil } from '@pgcloud/bench-support';

// As many segments at once as pgcloud's restore fetches.
const PARALLEL_FETCHES = 8;

/** Where a restore by hand takes its base backup and WAL from. */
export interface HandSource {
  client: Client;
  /** The path parameters of the base backup: the database's, and its `backup_id`. */
  backupPath: DatabasePath & { backup_id: string };
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
  downloaded: number;
  extracted: number;
  promoted: number;
  segments: number;
  rows: number;
}

/** One WAL segment to fetch, under the name restore_command asks for: its objects in order. */
interface WalObject {
  keys: string[];
  name: string;
  partial: boolean;
}

/** A listed object of the archive: a whole segment, or a piece of one from `start` to `end`. */
interface Listed {
  key: string;
  name: string;
  timeline: number;
  start: number;
  end: number;
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
      await pollUntil(
        () => restored.query('postgres', 'SELECT pg_is_in_recovery()'),
        (inRecovery) => inRecovery === 'f',
      );
      const promoted = seconds();
      const rows = Number(await restored.query(source.database, 'SELECT count(*) FROM wal_filler'));
      return { downloaded, extracted, promoted, segments, rows };
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
  const fetched = await downloadArchive(link.download_url, dir);
  if (!fetched.file) throw new Error(`the base backup's download answered ${fetched.status}`);
  return fetched.file;
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
      await pipeline(objects, createWriteStream(path));
      // pg_receivewal keeps the segment it writes at full size; the upload holds its data.
      if (next.partial) await truncate(path, WAL_SEGMENT_BYTES);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_FETCHES }, worker));
  return count;
}

/**
 * The segments of the newest timeline from the base backup's start on: each one whole
 * object, or the pieces it was uploaded in as it grew (the last one may still be growing).
 */
function walObjects(
  objects: readonly { key: string; size: number }[],
  source: HandSource,
): WalObject[] {
  const found = objects.flatMap(({ key, size }): Listed[] => {
    const match = /\/([0-9A-F]{24})(?:\.([0-9a-f]{8})-([0-9a-f]{8})|(\.partial))?$/.exec(key);
    const segment = match?.[1] ? parseSegmentName(match[1]) : undefined;
    if (!match?.[1] || !segment || segment.segno < source.firstSegment) return [];
    const [start, end] = match[2]
      ? [parseInt(match[2], 16), parseInt(match[3] ?? '', 16)]
      : [0, match[4] ? size : WAL_SEGMENT_BYTES];
    return [{ key, name: match[1], timeline: segment.timeline, start, end }];
  });
  if (found.length === 0) throw new Error(`no WAL segment under ${source.walPrefix}`);
  const timeline = Math.max(...found.map((o) => o.timeline));
  const names = [...new Set(found.filter((o) => o.timeline === timeline).map((o) => o.name))];
  return names.sort().map((name) => {
    const objects = found.filter((o) => o.name === name);
    // From the start, the longest object that begins where the one before ends.
    const chain: Listed[] = [];
    let reach = 0;
    while (reach < WAL_SEGMENT_BYTES) {
      const next = objects
        .filter((o) => o.start === reach)
        .sort((a, b) => b.end - a.end)
        .at(0);
      if (!next) break;
      chain.push(next);
      reach = next.end;
    }
    return { name, keys: chain.map((o) => o.key), partial: reach < WAL_SEGMENT_BYTES };
  });
}

/** recovery.signal and the recovery settings, in the files PostgreSQL's OS user owns. */
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
      `restore_command = 'cp ${walDir}/%f %p'`,
      `recovery_target_time = '${target}'`,
      `recovery_target_inclusive = on`,
      `recovery_target_action = 'promote'`,
      '',
    ].join('\n'),
  );
  await chownFile(autoConf, osUser);
}
