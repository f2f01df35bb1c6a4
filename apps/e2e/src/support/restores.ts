import assert from 'node:assert/strict';
import type { Restore } from '@pgcloud/contracts';
import { RESTORE_PHASES } from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { expectData } from './assertions.js';
import { sleep } from './device-flow.js';

/** Polls a restore until its status is one of `statuses`, and answers it. */
export async function waitForRestore(
  api: ApiClient,
  databasePath: string,
  restoreId: string,
  statuses: string[] = ['completed', 'failed'],
  timeoutMs = 180_000,
): Promise<Restore> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const restore = expectData<Restore>(
      await api.get(`${databasePath}/restores/${restoreId}`),
      200,
    );
    if (statuses.includes(restore.status)) return restore;
    if (Date.now() > deadline)
      throw new Error(`restore ${restoreId} is still ${restore.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Reads a restore every `everyMs` until it ends: every answer seen, in order. */
export async function watchRestore(
  api: ApiClient,
  databasePath: string,
  restoreId: string,
  everyMs = 300,
  timeoutMs = 180_000,
): Promise<Restore[]> {
  const deadline = Date.now() + timeoutMs;
  const seen: Restore[] = [];
  for (;;) {
    const restore = expectData<Restore>(
      await api.get(`${databasePath}/restores/${restoreId}`),
      200,
    );
    seen.push(restore);
    if (['completed', 'failed', 'cancelled'].includes(restore.status)) return seen;
    if (Date.now() > deadline)
      throw new Error(`restore ${restoreId} is still ${restore.phase} after ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/**
 * A watched restore that completed: its phases in order, ending `done`; its numbers never
 * going back; every byte of the base backup downloaded and every planned WAL file through.
 */
export function assertWatchedToDone(seen: Restore[]): void {
  const order = (restore: Restore) => RESTORE_PHASES.indexOf(restore.phase);
  const numbers = ['bytes_done', 'bytes_total', 'wal_files_done', 'wal_files_total'] as const;
  for (const [i, restore] of seen.entries()) {
    assert.ok(order(restore) >= 0, `a known phase: ${restore.phase}`);
    const before = seen[i - 1];
    if (!before) continue;
    assert.ok(order(restore) >= order(before), `${before.phase} then ${restore.phase}`);
    for (const key of numbers)
      assert.ok(restore.progress[key] >= before.progress[key], `${key} never goes back`);
  }
  const last = seen.at(-1);
  assert.equal(last?.status, 'completed', last?.error);
  assert.equal(last.phase, 'done');
  assert.ok(last.progress.bytes_total > 0, 'the base backup has a size');
  assert.equal(last.progress.bytes_done, last.progress.bytes_total);
  assert.equal(last.progress.wal_files_done, last.progress.wal_files_total);
  if (last.kind === 'backup') assert.equal(last.progress.wal_files_total, 0);
}
