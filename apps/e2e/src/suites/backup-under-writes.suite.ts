import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Backup, CreatedBackup, DownloadLink, Project } from '@pgcloud/contracts';
import { withSuperuser } from '@pgcloud/postgres';
import { RestoredByHand, downloadArchive, signIn } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { runningDatabase, superuserAddress } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { runPgbench } from '../support/pgbench.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

// Issue 17, item 1: a base backup holds the WAL it needs for its whole run. pg_basebackup
// -X fetch reads that WAL at the end; here pgbench writes at full speed on a server whose
// max_wal_size is the minimum, and checkpoints with segment switches run throughout, so
// every segment from the backup's start is recycled long before its end unless something
// holds it. Without the reservation (reserveWal in libs/postgres/src/base-backup.ts) the
// backup ends `failed`: "requested WAL segment ... has already been removed".

const SCALE = 5; // pgbench_accounts: 500,000 rows, about 75 MB

describe('a backup under full-speed writes', () => {
  it('completes, verifies and restores while checkpoints recycle WAL', async () => {
    const stack = await sharedStack();
    const { api } = await signIn(await newClient(), uniqueLogin('busy'));
    const project = expectData<Project>(await api.post('/projects', { name: 'busy' }), 201);
    const { database, connection } = await runningDatabase(api, project.id, 'busy');
    const server = superuserAddress(stack.dataDir, database.platform_service_id);
    await withSuperuser(server, 10_000, async (client) => {
      await client.query("ALTER SYSTEM SET max_wal_size = '32MB'");
      await client.query('SELECT pg_reload_conf()');
    });
    const pgbench = (args: string[], signal?: AbortSignal) => runPgbench(connection, args, signal);
    await pgbench(['-i', '-q', '-s', String(SCALE)]);

    const stop = new AbortController();
    const load = pgbench(['-n', '-c', '2', '-j', '2', '-T', '600'], stop.signal);
    const churn = churnWal(server, stop.signal);
    const path = `/projects/${project.id}/databases/busy/backups`;
    let backup: Backup;
    try {
      await sleep(1000); // writes under way before the backup starts
      const created = expectData<CreatedBackup>(await api.post(path), 201);
      backup = await waitForBackup(api, path, created.id, ['completed', 'failed'], 300_000);
    } finally {
      stop.abort();
      await Promise.allSettled([load, churn]);
    }
    assert.equal(backup.status, 'completed', `the backup failed: ${backup.error ?? '?'}`);

    const link = expectData<DownloadLink>(await api.get(`${path}/${backup.id}/download`), 200);
    const dir = mkdtempSync(join(tmpdir(), 'pgcloud-busy-'));
    chmodSync(dir, 0o755); // PostgreSQL's OS user extracts the download from here
    try {
      const fetched = await downloadArchive(link.download_url, dir);
      assert.equal(fetched.sha256, backup.checksum_sha256);
      const restored = await RestoredByHand.extract(fetched.file ?? '');
      try {
        assert.match(await restored.verify(), /backup successfully verified/);
        await restored.start();
        assert.equal(
          await restored.query('busy', 'SELECT count(*) FROM pgbench_accounts'),
          String(SCALE * 100_000),
        );
      } finally {
        await restored.remove();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expectData(await api.delete(`/projects/${project.id}?force=true`), 200);
  });
});

/** Checkpoints and segment switches, over and over, until `signal`: WAL recycled at once. */
async function churnWal(
  server: { socketDir: string; port: number },
  signal: AbortSignal,
): Promise<void> {
  await withSuperuser(server, 30_000, async (client) => {
    while (!signal.aborted) {
      await client.query('SELECT pg_switch_wal()');
      await client.query('CHECKPOINT');
      await sleep(100);
    }
  });
}
