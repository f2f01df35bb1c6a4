import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { OsUser } from '@pgcloud/postgres';
import { BASE_ENV } from '@pgcloud/postgres';
import type { RestoreArchive } from '../database-driver.js';
import { CorruptArchiveError } from '../database-driver.js';
import { fetchedBody } from './fetched-body.js';

const STDERR_KEPT_BYTES = 4096;

/** What a download may be given: a signal that stops it, and who is told its bytes so far. */
export interface DownloadOptions {
  signal?: AbortSignal;
  downloaded?: (bytes: number) => void;
}

/**
 * Downloads a base backup (a zstd tar) and extracts it into `dir` as the OS user while
 * hashing every byte: nothing is staged. The whole download is hashed even when tar gives
 * up early, so a changed byte is reported as what it is: a checksum that does not match.
 */
export async function downloadAndExtract(
  archive: RestoreArchive,
  dir: string,
  osUser: OsUser,
  { signal, downloaded }: DownloadOptions = {},
): Promise<void> {
  const response = await fetch(archive.url, signal ? { signal } : {});
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`the backup's download answered HTTP ${response.status}`);
  }
  const tar = spawn('tar', ['--zstd', '-x', '-f', '-', '-C', dir], {
    cwd: dir,
    env: BASE_ENV,
    stdio: ['pipe', 'ignore', 'pipe'],
    ...(signal ? { signal } : {}),
    ...(osUser.switchUser ? { uid: osUser.uid, gid: osUser.gid } : {}),
  });
  let stderr = '';
  tar.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT_BYTES);
  });
  let tarGone = false;
  tar.stdin.on('error', () => (tarGone = true));
  const exited = new Promise<number | null>((resolve) => {
    tar.once('close', (code) => {
      tarGone = true;
      resolve(code);
    });
    tar.once('error', () => resolve(null));
  });
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of fetchedBody(response.body, signal) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
    downloaded?.(bytes);
    if (tarGone) continue;
    if (!tar.stdin.write(chunk))
      await Promise.race([once(tar.stdin, 'drain').catch(() => undefined), exited]);
  }
  tar.stdin.end();
  const code = await exited;
  signal?.throwIfAborted();
  const sha256 = hash.digest('hex');
  if (sha256 !== archive.sha256)
    throw new CorruptArchiveError(`the archive's SHA-256 is ${sha256}, not ${archive.sha256}`);
  if (code !== 0) throw new Error(`tar could not extract the backup: ${stderr.trim()}`);
}
