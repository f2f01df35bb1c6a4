import type { Backup } from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { expectData } from './assertions.js';
import { sleep } from './device-flow.js';

/** Polls a backup until its status is one of `statuses`, and answers it. */
export async function waitForBackup(
  api: ApiClient,
  backupsPath: string,
  backupId: string,
  statuses: string[] = ['completed', 'failed'],
  timeoutMs = 120_000,
): Promise<Backup> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const backup = expectData<Backup>(await api.get(`${backupsPath}/${backupId}`), 200);
    if (statuses.includes(backup.status)) return backup;
    if (Date.now() > deadline)
      throw new Error(`backup ${backupId} is still ${backup.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}
