import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ensureSecretFile } from '@pgcloud/config';

/**
 * The key that seals database passwords: ENCRYPTION_KEY (32 bytes, base64) when given;
 * otherwise, for one machine, a key generated once under DATA_DIR/keys/ (mode 0600). The
 * file appears whole or not at all, and two provisioners starting at once on one DATA_DIR
 * both end up with the first one's (ensureSecretFile). Each start says so in the log, so
 * an operator knows to back it up or set their own.
 */
export async function loadEncryptionKey(
  configured: string | undefined,
  dataDir: string,
): Promise<Buffer> {
  const key = configured
    ? Buffer.from(configured, 'base64')
    : Buffer.from(await keyFile(dataDir), 'base64');
  if (key.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes, base64-encoded');
  return key;
}

async function keyFile(dataDir: string): Promise<string> {
  const file = join(dataDir, 'keys', 'encryption.key');
  // DATA_DIR itself stays open to PostgreSQL's OS user; only keys/ is closed (0700).
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const key = await ensureSecretFile(file, { prefix: '', setting: 'ENCRYPTION_KEY' });
  new Logger('Credentials').warn(`ENCRYPTION_KEY is not set: using ${file}; keep it safe`);
  return key;
}
