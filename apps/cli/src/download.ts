import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebStream } from 'node:stream/web';
import { CliError, EXIT } from './exit-codes.js';
import type { Progress } from './progress.js';

/** What a verified download needs: where from, where to, and what the bytes must hash to. */
export interface VerifiedDownload {
  /** A pre-signed URL: a secret for its lifetime, so never part of any message. */
  url: string;
  /** The file to write; it appears only once its bytes match. */
  target: string;
  /** Hex SHA-256 the bytes must have. */
  sha256: string;
  /** The size the API knows, for progress when the storage sends no Content-Length. */
  sizeBytes?: number;
  /** Replace an existing target. */
  force?: boolean;
  progress: Progress;
}

/** Exit 5 FILE_EXISTS when the target is there and may not be replaced. */
export function refuseExisting(target: string, force: boolean | undefined): void {
  if (!force && existsSync(target))
    throw new CliError(
      EXIT.conflict,
      'FILE_EXISTS',
      `${target} exists: choose another file with -o, or pass --force to replace it`,
    );
}

/**
 * Streams `url` into a temporary file beside the target (`.<name>.part-<random>`), hashing
 * as it goes, and renames it to the target only when the SHA-256 matches
 * (docs/cli.md). On a mismatch, or any other failure, the temporary file
 * is removed and the target is left as it was. Answers the number of bytes written.
 */
export async function downloadVerified(download: VerifiedDownload): Promise<number> {
  const { target, progress } = download;
  refuseExisting(target, download.force);
  const folder = dirname(target);
  await mkdir(folder, { recursive: true });
  const temp = join(folder, `.${basename(target)}.part-${randomBytes(6).toString('hex')}`);
  const removeTemp = () => rm(temp, { force: true });
  const interrupted = () => {
    void removeTemp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  try {
    const body = await open(download.url);
    const total = Number(body.headers.get('content-length')) || download.sizeBytes || undefined;
    const hash = createHash('sha256');
    let done = 0;
    let shown = 0;
    progress.update({ phase: 'downloading', bytesDone: 0, bytesTotal: total });
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, next) {
        hash.update(chunk);
        done += chunk.length;
        // A terminal redraws on each update: ten a second is plenty.
        if (Date.now() - shown >= 100 || done === total) {
          shown = Date.now();
          progress.update({ phase: 'downloading', bytesDone: done, bytesTotal: total });
        }
        next(null, chunk);
      },
    });
    await pipeline(
      Readable.fromWeb(body.body as WebStream<Uint8Array>),
      counting,
      createWriteStream(temp, { flags: 'wx', mode: 0o600 }),
    ).catch((error: unknown) => {
      throw new CliError(EXIT.error, 'DOWNLOAD_FAILED', `the download broke off: ${reason(error)}`);
    });
    const actual = hash.digest('hex');
    if (actual !== download.sha256.toLowerCase())
      throw new CliError(
        EXIT.error,
        'CHECKSUM_MISMATCH',
        `checksum mismatch: the ${done} bytes downloaded have SHA-256 ${actual}, the backup's ` +
          `checksum_sha256 is ${download.sha256}; nothing was written to ${target}`,
      );
    refuseExisting(target, download.force);
    await rename(temp, target);
    progress.update({ phase: 'verified', bytesDone: done, bytesTotal: total });
    return done;
  } catch (error) {
    await removeTemp();
    throw error;
  } finally {
    process.off('SIGINT', interrupted);
    progress.finish();
  }
}

/** GETs the link; errors never quote it, since it grants access until it expires. */
async function open(url: string): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new CliError(
      EXIT.unavailable,
      'DOWNLOAD_FAILED',
      `cannot reach the backup storage: ${reason(error)}`,
    );
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new CliError(
      EXIT.error,
      'DOWNLOAD_FAILED',
      `the backup storage answered ${response.status} ${response.statusText}` +
        (response.status === 403 ? ' (the link may have expired: try again)' : ''),
    );
  }
  return response as Response & { body: ReadableStream<Uint8Array> };
}

/** Why a request or stream failed, by error code only: messages may quote the URL. */
function reason(error: unknown): string {
  const inner = (error as { cause?: unknown })?.cause ?? error;
  const code = (inner as NodeJS.ErrnoException)?.code;
  return typeof code === 'string' ? code : 'the connection failed';
}
