import { Worker } from 'node:worker_threads';
import type { OsUser } from '@pgcloud/postgres';
import type { RestoreArchive } from '../database-driver.js';
import { CorruptArchiveError } from '../database-driver.js';
import type { DownloadJob, DownloadMessage, DownloadOrder } from './download-worker.js';

/** What a download may be given: a signal that stops it, and who is told its bytes so far. */
export interface DownloadOptions {
  signal?: AbortSignal;
  downloaded?: (bytes: number) => void;
}

/**
 * Downloads a base backup (a zstd tar) and extracts it into `dir` as the OS user while
 * hashing every byte (extractArchive): a changed byte is a CorruptArchiveError.
 *
 * The bytes pass through a worker thread (download-worker.ts), not this one: in the app's
 * heap (about 50 MB of live objects) the archive's buffers set off a full mark-compact for
 * every 12 MB or so, 37 of them while a 461 MB archive came down, and marking that heap
 * each time took a good part of a core the extraction and the restore's WAL fetches need.
 */
export async function downloadAndExtract(
  archive: RestoreArchive,
  dir: string,
  osUser: OsUser,
  { signal, downloaded }: DownloadOptions = {},
): Promise<void> {
  signal?.throwIfAborted();
  const job: DownloadJob = { url: archive.url, dir, osUser };
  const worker = new Worker(new URL('./download-worker.js', import.meta.url), { workerData: job });
  const abort = () => worker.postMessage({ abort: true } satisfies DownloadOrder);
  signal?.addEventListener('abort', abort, { once: true });
  let extracted: Extract<DownloadMessage, { kind: 'done' }>;
  try {
    extracted = await new Promise((resolve, reject) => {
      worker.on('message', (message: DownloadMessage) => {
        if (message.kind === 'read') downloaded?.(message.bytes);
        else if (message.kind === 'done') resolve(message);
        else reject(new Error(message.message));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the download's thread exited (${code})`)));
    });
  } catch (err) {
    // Cancelled: that is the reason, whatever the download made of it.
    signal?.throwIfAborted();
    throw err;
  } finally {
    signal?.removeEventListener('abort', abort);
    await worker.terminate();
  }
  signal?.throwIfAborted();
  if (extracted.sha256 !== archive.sha256)
    throw new CorruptArchiveError(
      `the archive's SHA-256 is ${extracted.sha256}, not ${archive.sha256}`,
    );
  if (extracted.tarError)
    throw new Error(`tar could not extract the backup: ${extracted.tarError}`);
}
