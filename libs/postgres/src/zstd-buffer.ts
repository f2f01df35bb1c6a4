import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { constants, setPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { BASE_ENV } from './os-user.js';

const STDERR_KEPT_BYTES = 2048;

/** zstd refused what it was given (not zstd, cut short, past a limit): what it said. */
export class ZstdError extends Error {
  override name = 'ZstdError';
}

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

/** How a FileDecompressor runs zstd. */
export interface ToFileOptions {
  /** The most bytes a file may hold: past it (a file size limit on zstd), zstd is stopped. */
  maxBytes: number;
  /** zstd's nice value (0, as this process, when absent): above 0, it yields the CPU. */
  niceness?: number;
}

/** zstd files decompressed one after another by one long-lived shell (startFileDecompressor). */
export interface FileDecompressor {
  /**
   * Decompresses the zstd file `from` into the file at `to` (made or replaced), never more
   * than `maxBytes` of it, and answers its size; the bytes never pass through this process.
   * A failure leaves no `to`: a ZstdError when zstd refused the file, another error when
   * the shell is gone.
   */
  toFile(from: string, to: string): Promise<number>;
  /** Ends the shell once the files given before are done. */
  close(): Promise<void>;
}

// The shell's loop: two lines in (from, to), one out (zstd's exit status, then what it said).
const DECOMPRESS_LOOP = [
  'while IFS= read -r from && IFS= read -r to; do',
  '  if zstd -d -q -f -o "$to" -- "$from" 2>"$to.zstd-err"; then echo 0',
  `  else status=$?; rm -f "$to"; echo "$status $(head -c ${STDERR_KEPT_BYTES} "$to.zstd-err" | tr '\\n' ' ')"; fi`,
  '  rm -f "$to.zstd-err"',
  'done',
].join('\n');

/**
 * Starts a shell that decompresses the files it is given, one at a time, under a limit
 * on the size of the files it writes and at `niceness`: for many files (a restore's WAL
 * segments), each zstd is a fork of that small shell rather than of this process, whose
 * fork and exec cost more than zstd's own work on a 16 MiB segment (200 decompressions
 * from an app's process: 16.9 CPU s; from the shell: 9.5).
 */
export function startFileDecompressor(options: ToFileOptions): FileDecompressor {
  const child = spawn(
    'prlimit',
    [`--fsize=${options.maxBytes}`, '--', 'sh', '-c', DECOMPRESS_LOOP],
    { env: BASE_ENV, stdio: ['pipe', 'pipe', 'ignore'] },
  );
  if (options.niceness && child.pid !== undefined)
    try {
      setPriority(child.pid, options.niceness);
    } catch {
      // it has exited: the answers waiting fail below
    }
  const waiting: { path: string; resolve: (size: number) => void; reject: (e: Error) => void }[] =
    [];
  let gone: Error | undefined;
  const answer = async (line: string) => {
    const next = waiting.shift();
    if (!next) return;
    const [status = '', ...said] = line.split(' ');
    if (status === '0') return stat(next.path).then((s) => next.resolve(s.size), next.reject);
    next.reject(new ZstdError(`zstd failed (${exitOf(Number(status))}): ${said.join(' ').trim()}`));
  };
  createInterface({ input: child.stdout }).on('line', (line) => void answer(line));
  const ended = new Promise<void>((resolve) =>
    child.once('close', (code, signal) => {
      gone = new Error(`the decompressing shell ended (${signal ?? `exit ${code}`})`);
      for (const next of waiting.splice(0)) next.reject(gone);
      resolve();
    }),
  );
  child.once('error', (err) => {
    gone = err;
    for (const next of waiting.splice(0)) next.reject(err);
  });
  child.stdin.on('error', () => undefined);
  return {
    toFile: (from, to) =>
      new Promise<number>((resolve, reject) => {
        if (gone) return reject(gone);
        if (/[\n\0]/.test(from + to)) return reject(new Error('a path with a line break'));
        waiting.push({ path: to, resolve, reject });
        child.stdin.write(`${from}\n${to}\n`);
      }),
    close: async () => {
      child.stdin.end();
      await ended;
    },
  };
}

/** A shell's exit status as zstd's end: past 128, the signal that stopped it. */
function exitOf(status: number): string {
  const signal = Object.entries(constants.signals).find(([, n]) => n === status - 128)?.[0];
  return status > 128 && signal ? signal : `exit ${status}`;
}

/** Runs zstd on `input` (its stdin) and answers its stdout, at most `maxBytes` of it. */
function runZstd(args: string[], input: Buffer | null, maxBytes: number): Promise<Buffer> {
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
      else reject(new ZstdError(`zstd failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
    });
    if (input) child.stdin.end(input);
    else child.stdin.end();
  });
}
