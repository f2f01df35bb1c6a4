import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ZstdError,
  startFileDecompressor,
  zstdCompress,
  zstdCompressFile,
  zstdDecompress,
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

    it('decompresses file after file in one shell, and answers each size', async (t) => {
      const decompressor = startFileDecompressor({ maxBytes: 3 << 20, niceness: 10 });
      t.after(() => decompressor.close());
      const wals = [1, 2].map((n) => Buffer.concat([randomBytes(4096), Buffer.alloc(n << 20)]));
      const done = wals.map(async (wal, i) => {
        await writeFile(join(dir, `${i}.zst`), await zstdCompress(wal));
        return decompressor.toFile(join(dir, `${i}.zst`), join(dir, `${i}`));
      });
      assert.deepEqual(
        await Promise.all(done),
        wals.map((wal) => wal.length),
      );
      for (const [i, wal] of wals.entries())
        assert.deepEqual(await readFile(join(dir, `${i}`)), wal);
      await decompressor.close();
      await assert.rejects(decompressor.toFile(join(dir, '0.zst'), join(dir, 'x')), (err) => {
        assert.ok(!(err instanceof ZstdError), 'a shell gone is no refusal of the file');
        return /ended/.test(String(err));
      });
    });

    it('stops past the limit, says what zstd said, and leaves no file', async (t) => {
      const decompressor = startFileDecompressor({ maxBytes: 1 << 20 });
      t.after(() => decompressor.close());
      const path = join(dir, 'too-long');
      await writeFile(join(dir, 'long.zst'), await zstdCompress(Buffer.alloc(4 << 20)));
      await writeFile(join(dir, 'bad.zst'), 'not zstd');
      await writeFile(join(dir, 'good.zst'), await zstdCompress(Buffer.alloc(1 << 20)));
      await assert.rejects(
        decompressor.toFile(join(dir, 'long.zst'), path),
        (err) => err instanceof ZstdError && /zstd failed \(SIGXFSZ\)/.test(err.message),
      );
      await assert.rejects(stat(path), { code: 'ENOENT' });
      await assert.rejects(
        decompressor.toFile(join(dir, 'bad.zst'), path),
        /zstd failed \(exit 1\): .+/,
      );
      await assert.rejects(stat(path), { code: 'ENOENT' });
      assert.equal(await decompressor.toFile(join(dir, 'good.zst'), path), 1 << 20, 'goes on');
    });
  });
});
