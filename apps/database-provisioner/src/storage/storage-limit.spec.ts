import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageAction, storageEdges } from './storage-limit.js';

const GIB = 1024 ** 3;

describe('storageAction', () => {
  it('makes a database read-only at its limit and writable below 90% of it', () => {
    assert.equal(storageAction(0.5 * GIB, 1, false), 'none');
    assert.equal(storageAction(1 * GIB, 1, false), 'make-read-only');
    assert.equal(storageAction(1.2 * GIB, 1, true), 'none');
    assert.equal(storageAction(0.95 * GIB, 1, true), 'none', 'no flapping just under the limit');
    assert.equal(storageAction(0.5 * GIB, 1, true), 'make-writable');
    assert.equal(storageAction(9 * GIB, 10, false), 'none');
  });
});

describe('storageEdges', () => {
  it('fences past the limit by a share of it, and by at least the minimum', () => {
    const grace = { percent: 10, minMib: 256 };
    assert.deepEqual(storageEdges(10, grace), { limitBytes: 10 * GIB, fenceAtBytes: 11 * GIB });
    assert.deepEqual(storageEdges(1, grace), { limitBytes: GIB, fenceAtBytes: 1.25 * GIB });
    assert.equal(storageEdges(1, { percent: 2, minMib: 0 }).fenceAtBytes, 1.02 * GIB);
  });

  it('allows twice the grace while a cleanup window is open, or the grace past its start', () => {
    const grace = { percent: 10, minMib: 256 };
    assert.equal(storageEdges(10, grace, { fromBytes: null }).fenceAtBytes, 12 * GIB);
    assert.equal(storageEdges(10, grace, { fromBytes: 11.5 * GIB }).fenceAtBytes, 12.5 * GIB);
    assert.equal(storageEdges(10, grace, { fromBytes: 10.5 * GIB }).fenceAtBytes, 12 * GIB);
  });
});
