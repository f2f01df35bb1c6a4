import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import type { OsUser } from '@pgcloud/postgres/files';
import type { RestoreSegment } from '../database-driver.js';
import { fetchSegment } from './segment-fetch.js';

/** What the spool's thread is given (wal-spool.ts). */
export interface SpoolJob {
  /** In the order they are fetched. */
  queue: RestoreSegment[];
  dir: string;
  /** Where each planned segment's empty file waits until the segment is in. */
  pendingDir: string;
  osUser: OsUser;
  /** Where restore_command lists each segment it handed recovery (spoolFiles().replayLog). */
  replayLog: string;
  parallel: number;
  headStart: number;
  /** Segments taken ahead of those replay has asked for, at most, once past the head start. */
  ahead: number;
  fetchTimeoutMs: number;
}

// How often a fetcher held back by `ahead` looks whether replay has moved on.
const REPLAY_LOOK_EVERY_MS = 50;

/** What the spool's thread is told. */
export type SpoolOrder =
  | { kind: 'base-is-in' }
  /** The restore was cancelled: the fetches fail. */
  | { kind: 'abort' }
  /** Recovery is over, or the build failed: the fetches stop, and that is no failure. */
  | { kind: 'stop' };

/** What the spool's thread tells: the first fetch that failed, then that every fetch ended. */
export type SpoolMessage = { kind: 'failed'; name: string; message: string } | { kind: 'settled' };

/**
 * The spool's fetches (wal-spool.ts), in a thread of their own: the segments' buffers come
 * and go in this thread's small heap rather than the app's. `parallel` at a time and in
 * order; the first `headStart` at once, the rest once the base backup is in, never more
 * than `ahead` past the segments replay has asked for. The first failure stops every fetch.
 */
async function run(job: SpoolJob, port: NonNullable<typeof parentPort>): Promise<void> {
  const aborted = new AbortController();
  const stopped = new AbortController();
  const signal = AbortSignal.any([aborted.signal, stopped.signal]);
  let baseIsIn = () => {};
  const baseIn = new Promise<void>((resolve) => (baseIsIn = resolve));
  port.on('message', (order: SpoolOrder) => {
    if (order.kind === 'abort') aborted.abort();
    if (order.kind === 'stop') stopped.abort();
    // The base backup in, or the fetches over: the fetchers waiting for it go on, or end.
    baseIsIn();
  });
  const queue = [...job.queue];
  let taken = 0;
  let replayed = 0;
  // One look at the replay log at a time, however many fetchers wait for it.
  let look: Promise<void> | undefined;
  const lookAtReplay = () =>
    (look ??= delay(REPLAY_LOOK_EVERY_MS)
      .then(() => replayedSegments(job.replayLog))
      .then((count) => void (replayed = count))
      .finally(() => (look = undefined)));
  // Cancelled or stopped, nothing is held back: the next take fails, or ends the fetcher.
  const heldBack = () => !signal.aborted && taken >= job.headStart && taken - replayed >= job.ahead;
  const fetcher = async () => {
    for (;;) {
      if (taken >= job.headStart) await baseIn;
      while (heldBack()) await lookAtReplay();
      // Nothing awaited from the look above to here: no other fetcher takes in between.
      const next = queue.shift();
      if (!next || stopped.signal.aborted) return;
      taken++;
      await fetchSegment(next, job.dir, job.osUser, signal, job.fetchTimeoutMs);
      await rm(join(job.pendingDir, next.name));
    }
  };
  await Promise.all(
    Array.from({ length: job.parallel }, () =>
      fetcher().catch((err: unknown) => {
        if (!stopped.signal.aborted) {
          const { name, message } = err instanceof Error ? err : new Error(String(err));
          port.postMessage({ kind: 'failed', name, message } satisfies SpoolMessage);
        }
        stopped.abort();
        baseIsIn();
      }),
    ),
  );
  port.postMessage({ kind: 'settled' } satisfies SpoolMessage);
  // Nothing more to do: the thread ends.
  port.close();
}

/** The segments restore_command has handed recovery so far: the replay log's names. */
async function replayedSegments(replayLog: string): Promise<number> {
  const log = await readFile(replayLog, 'utf8').catch(() => '');
  return new Set(log.split('\n').filter(Boolean)).size;
}

if (parentPort) await run(workerData as SpoolJob, parentPort);
