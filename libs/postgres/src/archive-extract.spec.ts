import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { extractArchive } from './archive-extract.js';
import type { OsUser } from './os-user.js';

// The spec's own user: nothing is switched.
const ME: OsUser = { name: 'me', uid: 0, gid: 0, switchUser: false };

describe('extracting a backup archive', () => {
  let dir: string;
  let archive: Buffer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pgcloud-extract-'));
    await writeFile(join(dir, 'PG_VERSION'), '15\n');
    archive = execFileSync('tar', ['--zstd', '-c', '-f', '-', '-C', dir, 'PG_VERSION']);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function target(): Promise<string> {
    return mkdtemp(join(dir, 'into-'));
  }

  it('extracts while hashing every byte', async () => {
    const into = await target();
    const found = await extractArchive(Readable.from([archive]), into, ME);
    assert.equal(found.sha256, createHash('sha256').update(archive).digest('hex'));
    assert.equal(found.bytes, archive.length);
    assert.equal(found.tarError, undefined);
    assert.equal(await readFile(join(into, 'PG_VERSION'), 'utf8'), '15\n');
  });

  it('hashes the whole of a source that is no archive, and says what tar said', async () => {
    const found = await extractArchive(
      Readable.from([Buffer.from('not a tar')]),
      await target(),
      ME,
    );
    assert.equal(found.bytes, 9);
    assert.match(found.tarError ?? '', /./);
  });

  it('fails when the source fails, and stops tar', async () => {
    const source = new PassThrough();
    source.write(archive.subarray(0, 10));
    setTimeout(() => source.destroy(new Error('connection reset')), 50);
    await assert.rejects(extractArchive(source, await target(), ME), /connection reset/);
  });

  it('fails a source that stalls, and stops tar', async () => {
    const source = new PassThrough();
    source.write(archive.subarray(0, 10));
    const into = await target();
    await assert.rejects(
      extractArchive(source, into, ME, { stalledAfterMs: 200 }),
      /gave no bytes for 0.2 s/,
    );
    assert.ok((await readdir(into)).length <= 1);
  });
});
