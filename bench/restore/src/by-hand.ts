// The same backup restored by hand, as an operator would with PostgreSQL's own tools:
// the archive downloaded through its link, extracted, and started.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { get } from 'node:https';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import type { Client } from '@pgcloud/api-client';
import { getBackupDownload, unwrap } from '@pgcloud/api-client';
import type { DatabasePath } from '@pgcloud/bench-support';
import { RestoredByHand } from '@pgcloud/testing';

/** Seconds of each step by hand. */
export interface HandSteps {
  download: number;
  extraction: number;
  start: number;
}

/**
 * Downloads the archive's pre-signed link into `file`, its SHA-256 computed as it streams.
 * The link names the S3's HTTPS endpoint, whose certificate this process does not trust on
 * its own (NODE_EXTRA_CA_CERTS is read at start, before the S3 is): node's https client
 * is given it, as an operator's client would be. Answers the SHA-256.
 */
async function download(url: string, file: string, caPem: string): Promise<string> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    get(url, { ca: caPem }, resolve).on('error', reject);
  });
  if (response.statusCode !== 200) {
    response.resume();
    throw new Error(`the download answered ${response.statusCode}`);
  }
  const hash = createHash('sha256');
  response.on('data', (chunk: Buffer) => hash.update(chunk));
  await pipeline(response, createWriteStream(file));
  return hash.digest('hex');
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
  const started = performance.now();
  const link = await unwrap(getBackupDownload({ client, path: backupPath }));
  const dir = await mkdtemp(join(parent, 'pgcloud-archive-'));
  try {
    // PostgreSQL's OS user extracts it.
    await chmod(dir, 0o755);
    const file = join(dir, 'backup.tar.zst');
    await download(link.download_url, file, s3CaPem);
    const downloaded = performance.now();
    const restored = await RestoredByHand.extract(file, parent);
    try {
      const extracted = performance.now();
      await restored.start();
      return {
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
