import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OsUser } from '@pgcloud/postgres';
import { chownFile, ensureOwnedDir } from '@pgcloud/postgres';
import type { JobPaths } from './job-env.js';
import { INPUT_FILES } from './restore-input.js';

/**
 * Copies the Secret's certificate and key beside the data (0600, the OS user's: PostgreSQL
 * refuses a key others can read, and a Secret's files are root's), never into it: the
 * data directory is cloned by pg_basebackup, the TLS files must not go with it.
 */
export async function installTls(inputDir: string, paths: JobPaths, osUser: OsUser): Promise<void> {
  await ensureOwnedDir(paths.tlsDir, osUser);
  for (const [from, to] of [
    [INPUT_FILES.cert, paths.certFile],
    [INPUT_FILES.key, paths.keyFile],
  ] as const) {
    await copyFile(join(inputDir, from), to);
    await chownFile(to, osUser, 0o600);
  }
}
