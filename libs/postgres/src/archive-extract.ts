import type { ChildProcess, ChildProcessByStdio } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
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
  /** zstd's or tar's complaint when the extraction failed (a corrupt archive, a full disk). */
  tarError?: string;
}

/** What an extraction may be given: a signal that stops it, and who is told its bytes. */
export interface ExtractOptions {
  signal?: AbortSignal;
  read?: (bytes: number) => void;
  /** How long the source may give nothing before it counts as stalled (2 minutes). */
  stalledAfterMs?: number;
}

/** One of the extraction's processes: how it ended, and the end of what it complained. */
interface Tool {
  exited: Promise<number | null>;
  stderr: () => string;
}

function watched(child: ChildProcess): Tool {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT_BYTES);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', resolve);
    child.once('error', () => resolve(null));
  });
  return { exited, stderr: () => stderr.trim() };
}

/**
 * `zstd -d | tar -x` as two processes joined by a pipe of their own, tar reading records
 * of 128 KB. `tar --zstd` reading a pipe passes every compressed byte through a process of
 * its own in records of 10 KB: for a 2 GB data directory that cost about 1.5 s more of
 * system time, on a machine whose two cores the download and the writes already share.
 */
function startExtraction(
  dir: string,
  osUser: OsUser,
  signal: AbortSignal | undefined,
): { zstd: ChildProcessByStdio<Writable, Readable, Readable>; tar: ChildProcess; tools: Tool[] } {
  const options = {
    cwd: dir,
    env: BASE_ENV,
    ...(signal ? { signal } : {}),
    ...(osUser.switchUser ? { uid: osUser.uid, gid: osUser.gid } : {}),
  };
  const zstd = spawn('zstd', ['-d', '-c', '-q'], { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  const tar = spawn('tar', ['-x', '-b', '256', '-B', '-f', '-', '-C', dir], {
    ...options,
    stdio: [zstd.stdout, 'ignore', 'pipe'],
  });
  // tar has the pipe's reading end now; this process keeps none, so that zstd is told
  // (EPIPE) when tar gives up, rather than waiting on a pipe nobody reads.
  zstd.stdout.destroy();
  return { zstd, tar, tools: [watched(zstd), watched(tar)] };
}

/**
 * Extracts a base backup (a zstd tar, as backups are stored) from `source` into `dir` as
 * the OS user while hashing every byte: nothing is staged. The whole source is read and
 * hashed even when the extraction gives up early, so a changed byte is reported as what it
 * is, a checksum that does not match, rather than as tar's error. A source that fails or
 * stalls fails the extraction, and its processes are stopped then: they never outlive the
 * call.
 */
export async function extractArchive(
  source: Readable,
  dir: string,
  osUser: OsUser,
  { signal, read, stalledAfterMs = STALLED_AFTER_MS }: ExtractOptions = {},
): Promise<ExtractedArchive> {
  const { zstd, tar, tools } = startExtraction(dir, osUser, signal);
  const input = zstd.stdin;
  let gone = false;
  input.on('error', () => (gone = true));
  const exited = Promise.all(tools.map((tool) => tool.exited));
  void exited.then(() => (gone = true));
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
      if (gone) continue;
      if (!input.write(chunk))
        await Promise.race([once(input, 'drain').catch(() => undefined), exited]);
      movedAt = Date.now();
    }
  } catch (err) {
    zstd.kill('SIGKILL');
    tar.kill('SIGKILL');
    input.destroy();
    await exited;
    throw err;
  } finally {
    clearInterval(watchdog);
  }
  input.end();
  const codes = await exited;
  signal?.throwIfAborted();
  const sha256 = hash.digest('hex');
  // zstd's complaint first: a corrupt stream leaves tar only an unexpected end to report.
  const failed = tools.findIndex((_, i) => codes[i] !== 0);
  if (failed === -1) return { sha256, bytes };
  const complaint = tools[failed]?.stderr();
  const tool = failed === 0 ? 'zstd' : 'tar';
  return { sha256, bytes, tarError: complaint || `${tool} exited with code ${codes[failed]}` };
}
