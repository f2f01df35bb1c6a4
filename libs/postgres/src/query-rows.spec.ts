import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rowsOf } from './query-rows.js';

describe('rowsOf', () => {
  it('takes the rows of an UPDATE answer ([rows, rowCount])', () => {
    assert.deepEqual(rowsOf([[{ id: 'job_a' }], 1]), [{ id: 'job_a' }]);
    assert.deepEqual(rowsOf([[], 0]), []);
  });

  it('takes the rows of an INSERT or SELECT answer as they are', () => {
    assert.deepEqual(rowsOf([{ id: 'job_a' }, { id: 'job_b' }]), [
      { id: 'job_a' },
      { id: 'job_b' },
    ]);
    assert.deepEqual(rowsOf([]), []);
  });

  it('answers no rows for anything else', () => {
    assert.deepEqual(rowsOf(undefined), []);
  });
});
