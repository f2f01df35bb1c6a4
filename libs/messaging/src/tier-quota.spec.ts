import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { assertTierQuota } from './tier-quota.js';

const LIMITS = { free: 5, pro: 50 };

function answer(tier: 'free' | 'pro' | undefined, used: number): string {
  try {
    assertTierQuota(tier, used, LIMITS, 'projects per account', 'delete one to make room');
    return 'allowed';
  } catch (err) {
    assert.ok(err instanceof DomainError);
    return `${err.code}: ${err.message}`;
  }
}

describe('assertTierQuota', () => {
  it('allows up to the Free limit, and a context without a tier is Free', () => {
    assert.equal(answer('free', 4), 'allowed');
    assert.equal(
      answer('free', 5),
      'QUOTA_EXCEEDED: The Free tier allows 5 projects per account; delete one to make room.',
    );
    assert.equal(answer(undefined, 4), 'allowed');
    assert.match(answer(undefined, 5), /^QUOTA_EXCEEDED: The Free tier allows 5 /);
  });

  it('allows up to the Pro limit', () => {
    assert.equal(answer('pro', 5), 'allowed');
    assert.equal(answer('pro', 49), 'allowed');
    assert.match(answer('pro', 50), /^QUOTA_EXCEEDED: The Pro tier allows 50 /);
  });
});
