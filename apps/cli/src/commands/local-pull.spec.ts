import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError } from '../exit-codes.js';
import { branchName, pullSource } from './local-pull.js';

describe('local pull', () => {
  it('pulls the newest backup unless told otherwise', () => {
    assert.deepEqual(pullSource({}), { kind: 'latest' });
    assert.deepEqual(pullSource({ latest: true }), { kind: 'latest' });
    assert.deepEqual(pullSource({ backup: 'bkp_1' }), { kind: 'backup', id: 'bkp_1' });
    assert.deepEqual(pullSource({ at: '2026-11-29T07:00:00Z' }), {
      kind: 'at',
      time: '2026-11-29T07:00:00Z',
    });
  });

  it('takes at most one of --backup, --at and --latest (exit 2)', () => {
    for (const flags of [
      { backup: 'bkp_1', latest: true },
      { backup: 'bkp_1', at: '2026-11-29T07:00:00Z' },
      { at: '2026-11-29T07:00:00Z', latest: true },
    ])
      assert.throws(
        () => pullSource(flags),
        (error: unknown) => error instanceof CliError && error.exitCode === 2,
      );
  });

  it('names the temporary branch within the 63 characters a name may have', () => {
    assert.match(branchName('shop'), /^shop-pull-[0-9a-f]{6}$/);
    assert.ok(branchName('a'.repeat(63)).length <= 63);
  });
});
