import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { OsUser } from './os-user.js';
import { BASE_ENV } from './os-user.js';

const STDERR_KEPT_BYTES = 4096;
/**
 * A source that gives nothing for this long has stalled: Node 20's fetch can leave a body
 * neither ended nor errored after its connection is gone, and a read of it waits for ever.
 */
const STALLED_AFTER_MS = 120_000;

/** What extracting a base backup's archive found. */
export interface ExtractedArchive {
  /** The SHA-256 of every byte read, in hex: the caller compares it with the recorded one. */
  sha256: string;
  bytes: number;
  /** tar's complaint when it failed (a corrupt archive, a full disk), else undefined. */
  tarError?: string;
}

/** What an extraction may be given: a signal that stops it, and who is told its bytes. */
export interface ExtractOptions {
  signal?: AbortSignal;
  read?: (bytes: number) => void;
  /** How long the source may give nothing before it counts as stalled (2 minutes). */
  stalledAfterMs?: number;
}

/**
 * Extracts a base backup (a zstd tar, as backups are stored) from `source` into `dir` as
 * the OS user while hashing every byte: nothing is staged. The whole source is read and
 * hashed even when tar gives up early, so a changed byte is reported as what it is, a
 * checksum that does not match, rather than as tar's error. A source that fails or stalls
 * fails the extraction, and tar is stopped then: it never outlives the call.
 */
export async function extractArchive(
  source: Readable,
  dir: string,
  osUser: OsUser,
  { signal, read, stalledAfterMs = STALLED_AFTER_MS }: ExtractOptions = {},
): Promise<ExtractedArchive> {
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
  let movedAt = Date.now();
  const watchdog = setInterval(
    () => {
      if (Date.now() - movedAt > stalledAfterMs)
        source.destroy(new Error(`the archive gave no bytes for ${stalledAfterMs / 1000} s`));
    },
    Math.min(5000, stalledAfterMs),
  );
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      movedAt = Date.now();
      hash.update(chunk);
      bytes += chunk.length;
      read?.(bytes);
      if (tarGone) continue;
      if (!tar.stdin.write(chunk))
        await Promise.race([once(tar.stdin, 'drain').catch(() => undefined), exited]);
      movedAt = Date.now();
    }
  } catch (err) {
    tar.kill('SIGKILL');
    tar.stdin.destroy();
    await exited;
    throw err;
  } finally {
    clearInterval(watchdog);
  }
  tar.stdin.end();
  const code = await exited;
  signal?.throwIfAborted();
  const sha256 = hash.digest('hex');
  if (code === 0) return { sha256, bytes };
  return { sha256, bytes, tarError: stderr.trim() || `tar exited with code ${code}` };
}
