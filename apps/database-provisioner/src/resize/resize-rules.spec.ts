import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { assertStorageFits, resizedConfig, storageAfterResize } from './resize-rules.js';

const GIB = 1024 ** 3;
const current = { cpu: 1, memory: 1, storage: 10 };

function refusedWith(pattern: RegExp) {
  return (err: unknown) =>
    err instanceof DomainError && err.code === 'STORAGE_IN_USE' && pattern.test(err.message);
}

describe('resize rules', () => {
  it('changes the parts given and keeps the others; the same size is no change', () => {
    assert.deepEqual(resizedConfig(current, { memory: 2 }), { cpu: 1, memory: 2, storage: 10 });
    assert.deepEqual(resizedConfig(current, { cpu: 0.5, storage: 20 }), {
      cpu: 0.5,
      memory: 1,
      storage: 20,
    });
    assert.equal(resizedConfig(current, {}), undefined);
    assert.equal(resizedConfig(current, { cpu: 1, storage: 10 }), undefined);
  });

  it('takes less storage only while the data fits under 90% of it', () => {
    const to = { ...current, storage: 2 };
    assertStorageFits('shop', current, to, { usedBytes: 1.7 * GIB, shrinksStorage: true });
    assert.throws(
      () => assertStorageFits('shop', current, to, { usedBytes: 1.8 * GIB, shrinksStorage: true }),
      refusedWith(/holds 1\.80 GiB: 2 GiB of storage/),
    );
  });

  it('refuses less storage where volumes only grow, and lets more through anywhere', () => {
    const room = { usedBytes: 0, shrinksStorage: false };
    assert.throws(
      () => assertStorageFits('shop', current, { ...current, storage: 5 }, room),
      refusedWith(/can only grow/),
    );
    assertStorageFits('shop', current, { ...current, storage: 20 }, room);
    // More storage than now, even if the data is past it: the fence may then be released.
    assertStorageFits(
      'shop',
      current,
      { ...current, storage: 11 },
      {
        usedBytes: 12 * GIB,
        shrinksStorage: true,
      },
    );
  });

  it('lifts a fence where the data is under the new fence edge, and read-only under 90%', () => {
    const grace = { percent: 10, minMib: 256 };
    const fenced = {
      config: { ...current, storage: 20 },
      storageFencedAt: new Date(),
      storageFull: true,
    };
    // 20 GiB: fenced past 22 GiB, writable under 18 GiB.
    assert.deepEqual(storageAfterResize(fenced, 12 * GIB, grace), {
      unfence: true,
      writable: true,
      fields: { storageFencedAt: null, storageCleanupUntil: null, storageFull: false },
    });
    assert.deepEqual(storageAfterResize(fenced, 19 * GIB, grace), {
      unfence: true,
      writable: false,
      fields: { storageFencedAt: null, storageCleanupUntil: null },
    });
    assert.deepEqual(storageAfterResize(fenced, 23 * GIB, grace), {
      unfence: false,
      writable: false,
      fields: {},
    });
    const plain = { config: current, storageFencedAt: null, storageFull: false };
    assert.deepEqual(storageAfterResize(plain, GIB, grace), {
      unfence: false,
      writable: false,
      fields: {},
    });
  });
});
