import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { segmentName, segmentStart } from '@pgcloud/postgres';
import type { StoredObject } from '@pgcloud/storage';
import { inspectArchive } from './archive-health.js';
import type { SegmentEntity } from './segment.entity.js';
import { compressedKey, pieceKey, segmentKey } from './wal-keys.js';

const MB16 = 16 * 1024 * 1024;
const at = (second: number): Date => new Date(Date.UTC(2026, 10, 28, 10, 0, second));

function segment(segno: bigint, pieceEnds: number[] | null = null): SegmentEntity {
  const name = segmentName(1, segno);
  const pieces = pieceEnds?.length ?? 1;
  return {
    databaseId: 'db_1',
    name,
    timeline: 1,
    segno,
    objectKey: segmentKey('prj_1', 'db_1', 1, name),
    pieceEnds,
    etags: Array.from({ length: pieces }, (_, i) => `"${name}-${i}"`),
    sizeBytes: MB16,
    zstdBytes: null,
    coveredUntil: at(Number(segno)),
    archivedAt: at(0),
  };
}

/** A segment stored zstd-compressed, in one object of 5000 bytes. */
function compressed(segno: bigint): SegmentEntity {
  const plain = segment(segno);
  return { ...plain, objectKey: compressedKey(plain.objectKey), zstdBytes: 5000 };
}

/** The objects the store lists for these segments, as they were written. */
function listed(segments: SegmentEntity[], second = 1): StoredObject[] {
  return segments.flatMap((s) => {
    if (!s.pieceEnds)
      return [
        {
          key: s.objectKey,
          size: s.zstdBytes ?? s.sizeBytes,
          lastModified: at(second),
          etag: `"${s.name}-0"`,
        },
      ];
    const ends = s.pieceEnds;
    return ends.map((end, i) => {
      const start = i === 0 ? 0 : ends[i - 1];
      return {
        key: pieceKey(s.objectKey, start, end),
        size: end - start,
        lastModified: at(second + i),
        etag: `"${s.name}-${i}"`,
      };
    });
  });
}

describe('inspectArchive', () => {
  // As is in one object, as pieces, and compressed.
  const whole = [segment(3n), segment(4n, [1000, MB16]), compressed(5n)];

  it('finds a whole archive whole, its newest object, and how far it reaches', () => {
    const found = inspectArchive(whole, listed(whole), 1);
    assert.equal(found.problem, undefined);
    assert.deepEqual(found.newestObjectAt, at(2));
    assert.equal(found.storedLsn, segmentStart(6n));
  });

  it('reaches into the segment being written as far as its pieces chain', () => {
    const writing = segmentKey('prj_1', 'db_1', 1, segmentName(1, 6n));
    const objects = [
      ...listed(whole),
      { key: pieceKey(writing, 0, 4096), size: 4096, lastModified: at(9) },
      { key: pieceKey(writing, 4096, 8192), size: 4096, lastModified: at(10) },
      { key: pieceKey(writing, 12288, 16384), size: 4096, lastModified: at(11) },
    ];
    const found = inspectArchive(whole, objects, 1);
    assert.equal(found.storedLsn, segmentStart(6n) + 8192n);
    assert.deepEqual(found.newestObjectAt, at(11));
  });

  it('names a segment whose object is gone', () => {
    const objects = listed(whole).filter((o) => !o.key.includes(segmentName(1, 5n)));
    const found = inspectArchive(whole, objects, 1);
    assert.equal(found.problem, `segment ${segmentName(1, 5n)} is missing from the object store`);
    assert.equal(found.firstBadSegno, 5n);
  });

  it('names a segment one of whose pieces is gone', () => {
    const objects = listed(whole).filter((o) => !o.key.includes('.000003e8-'));
    assert.match(inspectArchive(whole, objects, 1).problem ?? '', /00000004 is missing/);
  });

  it('names a segment whose object changed, or has another size', () => {
    const changed = listed(whole).map((o) =>
      o.key.endsWith(segmentName(1, 3n)) ? { ...o, etag: '"other"' } : o,
    );
    assert.match(inspectArchive(whole, changed, 1).problem ?? '', /00000003 changed/);
    const cut = listed(whole).map((o) =>
      o.key.includes(segmentName(1, 5n)) ? { ...o, size: MB16 } : o,
    );
    assert.match(
      inspectArchive(whole, cut, 1).problem ?? '',
      /00000005 holds 16777216 bytes in the object store, not 5000/,
    );
  });

  it('names the first segment missing from the record', () => {
    const gap = [segment(3n), segment(5n)];
    const found = inspectArchive(gap, listed(gap), 1);
    assert.equal(found.problem, `segment ${segmentName(1, 4n)} is missing from the archive`);
    assert.equal(found.firstBadSegno, 4n);
  });

  it('trusts sizes alone where no ETag was recorded, and looks at its timeline only', () => {
    const old = whole.map((s) => ({ ...s, etags: null }));
    const objects = listed(whole).map((o) => ({ ...o, etag: '"rewritten"' }));
    const other = {
      key: segmentKey('prj_1', 'db_1', 2, segmentName(2, 9n)),
      size: 1,
      lastModified: at(50),
    };
    const found = inspectArchive(old, [...objects, other], 1);
    assert.equal(found.problem, undefined);
    assert.deepEqual(found.newestObjectAt, at(2));
  });
});
