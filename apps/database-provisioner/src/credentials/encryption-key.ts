import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';

/**
 * The key that seals database passwords: ENCRYPTION_KEY (32 bytes, base64) when given;
 * otherwise, for one machine, a key generated once under DATA_DIR/keys/ (mode 0600),
 * which the log says, so an operator knows to back it up or set their own.
 */
export function loadEncryptionKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes, base64-encoded');
    return key;
  }
  const file = join(dataDir, 'keys', 'encryption.key');
  if (!existsSync(file)) {
    // DATA_DIR itself stays open to PostgreSQL's OS user; only keys/ is closed.
    mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Written whole under another name, then renamed: a crash never leaves half a key.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, randomBytes(32).toString('base64'), { mode: 0o600 });
    renameSync(partial, file);
    new Logger('Credentials').warn(
      `ENCRYPTION_KEY is not set: generated one in ${file}; keep it safe`,
    );
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}
