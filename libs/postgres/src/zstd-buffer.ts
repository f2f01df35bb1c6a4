import { spawn } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
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

/**
 * Decompresses a zstd buffer into the file at `path` (made or replaced), never more than
 * `maxBytes` of it (a file size limit on zstd: past it, zstd is stopped); answers the
 * file's size. The decompressed bytes never pass through this process: for a 16 MiB WAL
 * segment that is most of the work a restore's WAL fetch does. A failure leaves no file.
 */
export async function zstdDecompressToFile(
  bytes: Buffer,
  path: string,
  maxBytes: number,
): Promise<number> {
  try {
    await runZstd(['-d', '-q', '-f', '-o', path], bytes, 0, maxBytes);
    return (await stat(path)).size;
  } catch (err) {
    await rm(path, { force: true });
    throw err;
  }
}

/**
 * Runs zstd on `input` (its stdin) and answers its stdout, at most `maxBytes` of it; with
 * `maxFileBytes`, under a limit on the size of the files it writes.
 */
function runZstd(
  args: string[],
  input: Buffer | null,
  maxBytes: number,
  maxFileBytes?: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const [file, fileArgs] =
      maxFileBytes === undefined
        ? ['zstd', args]
        : ['prlimit', [`--fsize=${maxFileBytes}`, '--', 'zstd', ...args]];
    const child = spawn(file, fileArgs, { env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] });
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
