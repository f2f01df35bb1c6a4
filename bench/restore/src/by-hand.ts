// The same backup restored by hand, as an operator would with PostgreSQL's own tools:
// the archive downloaded through its link, extracted, and started.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Client } from '@pgcloud/api-client';
import { getBackupDownload, unwrap } from '@pgcloud/api-client';
import type { DatabasePath } from '@pgcloud/bench-support';
import { downloadTrusting } from '@pgcloud/bench-support';
import { RestoredByHand } from '@pgcloud/testing';

/** Seconds of each step by hand. */
export interface HandSteps {
  /** When it started (ms since the epoch): the steps follow from there. */
  startedAtMs: number;
  download: number;
  extraction: number;
  start: number;
}

/**
 * Seconds to download the archive through its link (with its SHA-256, into a file), to
 * extract it, and to start PostgreSQL on it (crash recovery included). `s3CaPem` is the
 * certificate of the S3 the link points to.
 */
export async function timeByHand(
  client: Client,
  backupPath: DatabasePath & { backup_id: string },
  parent: string,
  s3CaPem: string,
): Promise<HandSteps> {
  const startedAtMs = Date.now();
  const started = performance.now();
  const link = await unwrap(getBackupDownload({ client, path: backupPath }));
  const dir = await mkdtemp(join(parent, 'pgcloud-archive-'));
  try {
    // PostgreSQL's OS user extracts it.
    await chmod(dir, 0o755);
    const file = join(dir, 'backup.tar.zst');
    await downloadTrusting(link.download_url, file, s3CaPem);
    const downloaded = performance.now();
    const restored = await RestoredByHand.extract(file, parent);
    try {
      const extracted = performance.now();
      await restored.start();
      return {
        startedAtMs,
        download: (downloaded - started) / 1000,
        extraction: (extracted - downloaded) / 1000,
        start: (performance.now() - extracted) / 1000,
      };
    } finally {
      await restored.remove();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
