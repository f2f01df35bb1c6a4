import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureSecretFile } from './secret-file.js';

const TOKEN = { prefix: 'pgcd_', setting: 'DAEMON_TOKEN_FILE' };
const ensureTokenFile = (path: string): Promise<string> => ensureSecretFile(path, TOKEN);

describe('ensureSecretFile', () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'pgcloud-secret-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('writes a random token on first start, mode 0600, folders 0700, and keeps it', async () => {
    const path = join(scratch, 'first', 'pgcloud', 'daemon.token');
    const token = await ensureTokenFile(path);
    assert.match(token, /^pgcd_[A-Za-z0-9_-]{43}$/);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal((await stat(join(scratch, 'first', 'pgcloud'))).mode & 0o777, 0o700);
    assert.equal(await ensureTokenFile(path), token);
    assert.deepEqual(await readdir(join(scratch, 'first', 'pgcloud')), ['daemon.token']);
    assert.notEqual(await ensureTokenFile(join(scratch, 'other.token')), token);
  });

  it('gives two processes starting at once the same secret', async () => {
    const path = join(scratch, 'race', 'daemon.token');
    const tokens = await Promise.all([1, 2, 3, 4].map(() => ensureTokenFile(path)));
    assert.equal(new Set(tokens).size, 1);
    assert.deepEqual(await readdir(join(scratch, 'race')), ['daemon.token']);
  });

  it('reads a token written by hand, and closes a file others could read', async () => {
    const path = join(scratch, 'hand.token');
    await writeFile(path, '  my-own-token-0123456789\n');
    await chmod(path, 0o644);
    assert.equal(await ensureTokenFile(path), 'my-own-token-0123456789');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  it('refuses an empty or trivial token file, naming the setting', async () => {
    const path = join(scratch, 'empty.token');
    await writeFile(path, '\n', { mode: 0o600 });
    await assert.rejects(ensureTokenFile(path), /DAEMON_TOKEN_FILE/);
    await writeFile(path, 'short\n', { mode: 0o600 });
    await assert.rejects(ensureTokenFile(path), /holds nothing usable/);
  });
});
