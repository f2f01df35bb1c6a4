import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertSocketPathFits } from './socket-path.js';

describe('assertSocketPathFits', () => {
  const setting = (value: string): { name: string; value: string } => ({ name: 'SOME_DIR', value });

  it('accepts a socket path of up to 107 bytes', () => {
    const dir = `/${'d'.repeat(107 - '/.s.PGSQL.65535'.length - 1)}`;
    assert.doesNotThrow(() => assertSocketPathFits(dir, 65535, setting(dir)));
  });

  it('names the setting when the path is longer', () => {
    const dir = `/${'d'.repeat(107 - '/.s.PGSQL.65535'.length)}`;
    assert.throws(
      () => assertSocketPathFits(dir, 65535, setting('/the/dir')),
      /^Error: SOME_DIR \(\/the\/dir\) is too deep: .*108-byte/,
    );
  });

  it('refuses what is not a port', () => {
    assert.throws(() => assertSocketPathFits('/tmp', 70000, setting('/tmp')), /not a port/);
    assert.throws(() => assertSocketPathFits('/tmp', 0, setting('/tmp')), /not a port/);
  });
});
