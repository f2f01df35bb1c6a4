import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Piece } from './wal-keys.js';
import { chainOf, pieceKey, pieceKeys, pieceOf, segmentKey } from './wal-keys.js';

const NAME = '000000020000000000000005';
const KEY = segmentKey('prj_1', 'db_1', 2, NAME);
const piece = (start: number, end: number): Piece => ({
  key: pieceKey(KEY, start, end),
  name: NAME,
  start,
  end,
});

describe('WAL keys', () => {
  it('names a piece by its offsets, and reads it back', () => {
    assert.equal(pieceKey(KEY, 0, 0x350000), `${KEY}.00000000-00350000`);
    assert.deepEqual(
      pieceOf({ key: pieceKey(KEY, 0x10, 0x350000), size: 1 }),
      piece(0x10, 0x350000),
    );
    assert.deepEqual(pieceKeys(KEY, [6, 13, 20]), [
      pieceKey(KEY, 0, 6),
      pieceKey(KEY, 6, 13),
      pieceKey(KEY, 13, 20),
    ]);
  });

  it("takes an earlier version's .partial as a piece from 0, and nothing else as one", () => {
    assert.deepEqual(pieceOf({ key: `${KEY}.partial`, size: 42 }), {
      key: `${KEY}.partial`,
      name: NAME,
      start: 0,
      end: 42,
    });
    for (const key of [KEY, `${KEY}.partial.x`, `${KEY}.00000010-00000010`, `${KEY}.zz-00000010`])
      assert.equal(pieceOf({ key, size: 16 }), undefined, key);
  });

  it('chains pieces from the start as far as they go, in the fewest, or finds the gap', () => {
    const pieces = [piece(6, 13), piece(0, 6), piece(6, 9), piece(13, 20), piece(9, 13)];
    assert.deepEqual(chainOf(pieces, 20), [piece(0, 6), piece(6, 13), piece(13, 20)]);
    // The longest piece from 6 leads nowhere; a shorter one does (a late writer's overlap).
    const overlapping = [piece(0, 6), piece(6, 11), piece(6, 10), piece(10, 14)];
    assert.deepEqual(chainOf(overlapping, 12), [piece(0, 6), piece(6, 10), piece(10, 14)]);
    assert.deepEqual(chainOf([piece(0, 13), ...pieces], 20), [piece(0, 13), piece(13, 20)]);
    assert.deepEqual(chainOf(pieces, 10), chainOf(pieces, 20), 'as far as they go');
    assert.deepEqual(chainOf([], 0), []);
    assert.equal(chainOf(pieces, 21), undefined, 'nothing reaches 21');
    assert.equal(chainOf([piece(6, 13)], 13), undefined, 'nothing from 0');
  });
});
