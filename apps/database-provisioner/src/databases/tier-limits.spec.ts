import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { DEFAULT_CONFIG, assertWithinTier } from './tier-limits.js';

const FREE = { databasesPerProject: 3, cpu: 1, memory: 2, storage: 10 };

function code(run: () => void): string | undefined {
  try {
    run();
  } catch (err) {
    return err instanceof DomainError ? err.code : 'other';
  }
  return undefined;
}

describe('assertWithinTier', () => {
  it('lets Free have three databases of at most 1 cpu, 2 GiB and 10 GiB', () => {
    assert.equal(
      code(() => assertWithinTier('free', DEFAULT_CONFIG, 2, FREE)),
      undefined,
    );
    assert.equal(
      code(() => assertWithinTier('free', { cpu: 1, memory: 2, storage: 10 }, 0, FREE)),
      undefined,
    );
    assert.equal(
      code(() => assertWithinTier('free', DEFAULT_CONFIG, 3, FREE)),
      'QUOTA_EXCEEDED',
    );
    assert.equal(
      code(() => assertWithinTier('free', { cpu: 2, memory: 1, storage: 10 }, 0, FREE)),
      'QUOTA_EXCEEDED',
    );
    assert.equal(
      code(() => assertWithinTier('free', { cpu: 1, memory: 2.5, storage: 10 }, 0, FREE)),
      'QUOTA_EXCEEDED',
    );
    assert.equal(
      code(() => assertWithinTier('free', { cpu: 1, memory: 1, storage: 11 }, 0, FREE)),
      'QUOTA_EXCEEDED',
    );
    assert.equal(
      code(() => assertWithinTier(undefined, DEFAULT_CONFIG, 3, FREE)),
      'QUOTA_EXCEEDED',
    );
  });

  it('lets Pro pass', () => {
    assert.equal(
      code(() => assertWithinTier('pro', { cpu: 16, memory: 64, storage: 1024 }, 50, FREE)),
      undefined,
    );
  });
});
