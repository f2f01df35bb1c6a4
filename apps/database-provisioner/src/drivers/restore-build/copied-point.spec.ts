import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { switchPointOf } from './copied-point.js';

describe('the point a restore copied its source at', () => {
  it("is the switch point of the history file's last entry", () => {
    assert.equal(switchPointOf('1\t0/3000148\tno recovery target specified\n'), '0/3000148');
    const twice =
      '1\t0/3000148\tno recovery target specified\n\n2\t0/5A0001C0\tbefore 2026-11-29\n';
    assert.equal(switchPointOf(twice), '0/5A0001C0');
    assert.equal(switchPointOf(''), undefined);
  });
});
