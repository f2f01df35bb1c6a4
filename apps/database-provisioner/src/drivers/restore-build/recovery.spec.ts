import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresTime, recoveryTargetOption } from './recovery.js';

describe('recovery targets', () => {
  it('sets the one recovery_target_* setting each kind of target needs', () => {
    assert.equal(
      recoveryTargetOption({ time: '2026-11-24T07:00:00.123456Z' }),
      '-c "recovery_target_time=2026-11-24 07:00:00.123456+00:00"',
    );
    assert.equal(recoveryTargetOption({ lsn: '0/3000148' }), '-c recovery_target_lsn=0/3000148');
    assert.equal(
      recoveryTargetOption({ restorePoint: 'before-migration_2' }),
      '-c recovery_target_name=before-migration_2',
    );
  });

  it('refuses a restore point name that would need quoting', () => {
    for (const name of ['a b', 'x"; DROP', "it's", ''])
      assert.throws(() => recoveryTargetOption({ restorePoint: name }), /database name rules/);
  });

  it('writes times with a numeric offset', () => {
    assert.equal(postgresTime('2026-01-01T00:00:00.000001Z'), '2026-01-01 00:00:00.000001+00:00');
  });
});
