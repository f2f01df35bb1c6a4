import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { liftingSettings } from './server-limits.js';

describe('liftingSettings', () => {
  it('finds read-only settings turned off, whatever their spelling', () => {
    assert.deepEqual(liftingSettings(['default_transaction_read_only=off']), [
      'default_transaction_read_only',
    ]);
    assert.deepEqual(liftingSettings(['Transaction_Read_Only=false']), ['transaction_read_only']);
    for (const value of ['0', 'no', 'n', 'of', 'f', 'OFF'])
      assert.deepEqual(liftingSettings([`default_transaction_read_only=${value}`]), [
        'default_transaction_read_only',
      ]);
  });

  it('keeps a read-only setting the owner turned on, and every other setting', () => {
    for (const value of ['on', 'true', 'yes', '1', 'ON', 't', 'y'])
      assert.deepEqual(liftingSettings([`default_transaction_read_only=${value}`]), []);
    assert.deepEqual(liftingSettings(['search_path=app, public', 'work_mem=64MB']), []);
    assert.deepEqual(liftingSettings(['default_transaction_isolation=serializable']), []);
  });

  it('names each setting once, among others', () => {
    assert.deepEqual(
      liftingSettings([
        'work_mem=64MB',
        'default_transaction_read_only=off',
        'transaction_read_only=off',
      ]),
      ['default_transaction_read_only', 'transaction_read_only'],
    );
  });
});
