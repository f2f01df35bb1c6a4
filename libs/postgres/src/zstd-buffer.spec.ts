import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  zstdCompress,
  zstdCompressFile,
  zstdDecompress,
  zstdDecompressToFile,
} from './zstd-buffer.js';

describe('zstd on buffers', () => {
  it('gives back what it compressed, in fewer bytes where it repeats', async () => {
    const wal = Buffer.concat([randomBytes(4096), Buffer.alloc(1 << 20)]);
    const compressed = await zstdCompress(wal);
    assert.ok(compressed.length < 8192, `${compressed.length} bytes`);
    assert.deepEqual(await zstdDecompress(compressed, wal.length), wal);
  });

  it('refuses an output longer than allowed', async () => {
    const compressed = await zstdCompress(Buffer.alloc(4 << 20));
    await assert.rejects(zstdDecompress(compressed, 1 << 20), /longer than 1048576 bytes/);
  });

  it('says what zstd said of bytes that are not zstd, or cut short', async () => {
    await assert.rejects(zstdDecompress(randomBytes(1000), 1 << 20), /zstd failed \(exit 1\): .+/);
    const compressed = await zstdCompress(randomBytes(100_000));
    await assert.rejects(
      zstdDecompress(compressed.subarray(0, compressed.length - 10), 1 << 20),
      /zstd failed/,
    );
  });

  describe('into a file', () => {
    let dir: string;
    before(async () => (dir = await mkdtemp(join(tmpdir(), 'pgcloud-zstd-'))));
    after(() => rm(dir, { recursive: true, force: true }));

    it('compresses a file, read by zstd itself', async () => {
      const wal = Buffer.concat([randomBytes(4096), Buffer.alloc(1 << 20)]);
      const path = join(dir, 'plain');
      await writeFile(path, wal);
      const compressed = await zstdCompressFile(path);
      assert.ok(compressed.length < 8192, `${compressed.length} bytes`);
      assert.deepEqual(await zstdDecompress(compressed, wal.length), wal);
      await assert.rejects(zstdCompressFile(join(dir, 'none')), /zstd failed/);
    });

    it('writes what it holds, and answers its size', async () => {
      const wal = Buffer.concat([randomBytes(4096), Buffer.alloc(1 << 20)]);
      const path = join(dir, 'segment');
      assert.equal(
        await zstdDecompressToFile(await zstdCompress(wal), path, {
          maxBytes: wal.length,
          niceness: 10,
        }),
        wal.length,
      );
      assert.deepEqual(await readFile(path), wal);
    });

    it('stops past the limit, and leaves no file', async () => {
      const path = join(dir, 'too-long');
      const compressed = await zstdCompress(Buffer.alloc(4 << 20));
      await assert.rejects(
        zstdDecompressToFile(compressed, path, { maxBytes: 1 << 20 }),
        /zstd failed/,
      );
      await assert.rejects(stat(path), { code: 'ENOENT' });
      await assert.rejects(
        zstdDecompressToFile(Buffer.from('not zstd'), path, { maxBytes: 1 << 20 }),
        /zstd failed \(exit 1\)/,
      );
      await assert.rejects(stat(path), { code: 'ENOENT' });
    });
  });
});
