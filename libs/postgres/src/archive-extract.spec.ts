import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
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

  it('reads and hashes the rest after tar gives up on what zstd gave it', async () => {
    const noTar = execFileSync('zstd', ['-c', '-q'], {
      input: randomBytes(4 * 1024 * 1024),
      maxBuffer: 16 * 1024 * 1024,
    });
    const chunks = Array.from({ length: Math.ceil(noTar.length / 65536) }, (_, i) =>
      noTar.subarray(i * 65536, (i + 1) * 65536),
    );
    const found = await extractArchive(Readable.from(chunks), await target(), ME);
    assert.equal(found.bytes, noTar.length);
    assert.equal(found.sha256, createHash('sha256').update(noTar).digest('hex'));
    assert.match(found.tarError ?? '', /tar archive/);
  });

  it('says what zstd said of a stream cut short', async () => {
    const found = await extractArchive(
      Readable.from([archive.subarray(0, archive.length - 8)]),
      await target(),
      ME,
    );
    assert.match(found.tarError ?? '', /premature end/);
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
