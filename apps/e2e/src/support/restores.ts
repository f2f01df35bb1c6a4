import type { Restore } from '@pgcloud/contracts';
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
