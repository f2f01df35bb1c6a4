import { spawn } from 'node:child_process';
import { BASE_ENV } from './os-user.js';

const STDERR_KEPT_BYTES = 2048;

/**
 * A buffer compressed by zstd at its default level (3), in one frame: how the WAL archive
 * stores a completed segment (docs/architecture.md#the-wal-archive-inside).
 */
export function zstdCompress(bytes: Buffer): Promise<Buffer> {
  return runZstd(['-q', '-c', '-3'], bytes, Number.POSITIVE_INFINITY);
}

/**
 * What a zstd buffer holds, refused as it comes once longer than `maxBytes` (what is stored
 * decides how much memory it takes otherwise); a buffer that is not zstd, or cut short,
 * fails with what zstd said.
 */
export function zstdDecompress(bytes: Buffer, maxBytes: number): Promise<Buffer> {
  return runZstd(['-d', '-q', '-c'], bytes, maxBytes);
}

/** Runs zstd on `input` (its stdin) and answers its stdout, at most `maxBytes` of it. */
function runZstd(args: string[], input: Buffer, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('zstd', args, { env: BASE_ENV, stdio: ['pipe', 'pipe', 'pipe'] });
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
    child.stdin.end(input);
  });
}
