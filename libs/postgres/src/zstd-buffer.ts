import { spawn } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { BASE_ENV } from './os-user.js';

const STDERR_KEPT_BYTES = 2048;

/**
 * A buffer compressed by zstd at its default level (3), in one frame: how the WAL archive
 * stores a completed segment (docs/architecture.md#the-wal-archive-inside).
 */
export function zstdCompress(bytes: Buffer): Promise<Buffer> {
  return runZstd(['-q', '-c', '-3'], bytes, Number.POSITIVE_INFINITY);
}

/** A file compressed as zstdCompress does, read by zstd itself (not through this process). */
export function zstdCompressFile(path: string): Promise<Buffer> {
  return runZstd(['-q', '-c', '-3', '--', path], null, Number.POSITIVE_INFINITY);
}

/**
 * What a zstd buffer holds, refused as it comes once longer than `maxBytes` (what is stored
 * decides how much memory it takes otherwise); a buffer that is not zstd, or cut short,
 * fails with what zstd said.
 */
export function zstdDecompress(bytes: Buffer, maxBytes: number): Promise<Buffer> {
  return runZstd(['-d', '-q', '-c'], bytes, maxBytes);
}

/** How zstdDecompressToFile runs zstd. */
export interface ToFileOptions {
  /** The most bytes the file may hold: past it (a file size limit on zstd), zstd is stopped. */
  maxBytes: number;
  /** zstd's nice value (0, as this process, when absent): above 0, it yields the CPU. */
  niceness?: number;
}

/**
 * Decompresses a zstd buffer into the file at `path` (made or replaced), never more than
 * `maxBytes` of it; answers the file's size. The decompressed bytes never pass through
 * this process: for a 16 MiB WAL segment that is most of the work a restore's WAL fetch
 * does. A failure leaves no file.
 */
export async function zstdDecompressToFile(
  bytes: Buffer,
  path: string,
  options: ToFileOptions,
): Promise<number> {
  try {
    await runZstd(['-d', '-q', '-f', '-o', path], bytes, 0, options);
    return (await stat(path)).size;
  } catch (err) {
    await rm(path, { force: true });
    throw err;
  }
}

/**
 * Runs zstd on `input` (its stdin) and answers its stdout, at most `maxBytes` of it; with
 * `toFile`, under a limit on the size of the files it writes, at its nice value.
 */
function runZstd(
  args: string[],
  input: Buffer | null,
  maxBytes: number,
  toFile?: ToFileOptions,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const [file, fileArgs] = toFile
      ? ['prlimit', [`--fsize=${toFile.maxBytes}`, '--', 'zstd', ...args]]
      : ['zstd', args];
    const child = spawn(file, fileArgs, { env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] });
    // Kept across prlimit's exec of zstd. A child gone already (ESRCH) has nothing to yield.
    if (toFile?.niceness && child.pid !== undefined)
      try {
        setPriority(child.pid, toFile.niceness);
      } catch {
        // it has exited: its close says how
      }
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let refused: Error | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes && !refused) {
        refused = new Error(`zstd's output is longer than ${maxBytes} bytes`);
        child.kill('SIGKILL');
      }
      if (!refused) chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_BYTES);
    });
    // zstd may stop reading (bad input, killed): its exit tells why, not the broken pipe.
    child.stdin.on('error', () => undefined);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (refused) reject(refused);
      else if (code === 0) resolve(Buffer.concat(chunks));
      else reject(new Error(`zstd failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
    });
    if (input) child.stdin.end(input);
    else child.stdin.end();
  });
}
