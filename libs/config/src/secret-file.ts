import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** What a secret file holds and which setting to name when it is unusable. */
export interface SecretFileOptions {
  /** Put before the random part, so the secret says what it is (`pgcd_` for the token). */
  prefix: string;
  /** The setting that chose the file's place, for error messages. */
  setting: string;
}

const SECRET_BYTES = 32;
// A secret someone wrote by hand is accepted too, if it is not trivially short.
const USABLE_SECRET = /^\S{16,}$/;

/**
 * A secret kept in a file of its own: read from `path`, or made at random and written
 * there with mode 0600 (its folders made 0700) the first time. The file appears whole
 * or not at all, and of two processes starting at once both end up with the first one's.
 */
export async function ensureSecretFile(path: string, options: SecretFileOptions): Promise<string> {
  const existing = await readSecret(path, options);
  if (existing !== undefined) return existing;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const draft = `${path}.${randomBytes(6).toString('hex')}.new`;
  const secret = `${options.prefix}${randomBytes(SECRET_BYTES).toString('base64url')}`;
  await writeFile(draft, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  try {
    // link, unlike rename, never replaces a file another process put there meanwhile.
    await link(draft, path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  } finally {
    await rm(draft, { force: true });
  }
  const written = await readSecret(path, options);
  if (written === undefined) throw new Error(`${path} vanished as it was written`);
  return written;
}

async function readSecret(path: string, options: SecretFileOptions): Promise<string | undefined> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) return undefined;
  const secret = text.trim();
  if (!USABLE_SECRET.test(secret)) {
    throw new Error(
      `${path} (${options.setting}) holds nothing usable: ` +
        'remove it and a new one is written at the next start',
    );
  }
  // A key (a token, a password, an encryption key): nobody but its owner may read it.
  if (((await stat(path)).mode & 0o077) !== 0) await chmod(path, 0o600);
  return secret;
}
