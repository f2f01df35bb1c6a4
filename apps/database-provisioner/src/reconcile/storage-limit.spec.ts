import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageAction } from './storage-limit.js';

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
