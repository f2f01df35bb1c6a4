import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { zstdCompress, zstdDecompress } from './zstd-buffer.js';

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
});
