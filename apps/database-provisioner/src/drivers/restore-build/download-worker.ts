import { parentPort, workerData } from 'node:worker_threads';
import type { OsUser } from '@pgcloud/postgres/files';
import { extractArchive } from '@pgcloud/postgres/files';
import { fetchBody } from './fetched-body.js';

/** What the worker is given: the archive's link and where to extract it, as whom. */
export interface DownloadJob {
  url: string;
  dir: string;
  osUser: OsUser;
}

/** What the worker tells: bytes read so far, then how it ended. */
export type DownloadMessage =
  | { kind: 'read'; bytes: number }
  | { kind: 'done'; sha256: string; bytes: number; tarError?: string }
  | { kind: 'failed'; message: string };

/** What the worker is told: stop (the restore was cancelled). */
export interface DownloadOrder {
  abort: true;
}

// Bytes read between two messages about them: a message per chunk would cost more than
// what it saves.
const READ_REPORT_BYTES = 1 << 20;

/**
 * The base backup's download and extraction (archive-extract.ts), in a thread of its own:
 * its buffers come and go in this thread's small heap rather than the app's.
 */
async function run(job: DownloadJob, port: NonNullable<typeof parentPort>): Promise<void> {
  const stopped = new AbortController();
  port.on('message', (order: DownloadOrder) => {
    if (order.abort) stopped.abort();
  });
  const post = (message: DownloadMessage) => port.postMessage(message);
  try {
    const body = await fetchBody(job.url, stopped.signal);
    if (body.statusCode !== 200) {
      body.destroy();
      throw new Error(`the backup's download answered HTTP ${body.statusCode}`);
    }
    let told = 0;
    const extracted = await extractArchive(body, job.dir, job.osUser, {
      signal: stopped.signal,
      read: (bytes) => {
        if (bytes - told < READ_REPORT_BYTES) return;
        told = bytes;
        post({ kind: 'read', bytes });
      },
    });
    post({ kind: 'read', bytes: extracted.bytes });
    post({ kind: 'done', ...extracted });
  } catch (err) {
    post({ kind: 'failed', message: err instanceof Error ? err.message : String(err) });
  } finally {
    // Nothing more to do: the thread ends.
    port.close();
  }
}

if (parentPort) await run(workerData as DownloadJob, parentPort);
