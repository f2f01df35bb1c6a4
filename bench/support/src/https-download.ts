// A backup's pre-signed link downloaded as an operator would, over the S3's HTTPS.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { get } from 'node:https';
import { pipeline } from 'node:stream/promises';

/**
 * Downloads `url` into `file`, its SHA-256 computed as it streams, and answers the SHA-256.
 * The link names the S3's HTTPS endpoint, whose certificate this process does not trust on
 * its own (NODE_EXTRA_CA_CERTS is read at start, before the S3 is): node's https client is
 * given it (`caPem`), as an operator's client would be.
 */
export async function downloadTrusting(url: string, file: string, caPem: string): Promise<string> {
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
