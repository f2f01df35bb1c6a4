import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { assertExpiryWithinTier, requestedExpiry } from './expiry.js';

const NOW = Date.UTC(2026, 10, 28, 12);
const DAY = 86_400_000;
const code = (work: () => unknown) => {
  try {
    work();
  } catch (err) {
    return err instanceof DomainError ? err.code : String(err);
  }
  return 'none';
};

describe('database expiry', () => {
  it('takes a moment in the future, at most a year ahead; null or none is never', () => {
    assert.equal(requestedExpiry(undefined, NOW), null);
    assert.equal(requestedExpiry(null, NOW), null);
    const inADay = new Date(NOW + DAY).toISOString();
    assert.equal(requestedExpiry(inADay, NOW)?.toISOString(), inADay);
    assert.equal(
      code(() => requestedExpiry(new Date(NOW).toISOString(), NOW)),
      'VALIDATION_ERROR',
    );
    assert.equal(
      code(() => requestedExpiry(new Date(NOW + 366 * DAY).toISOString(), NOW)),
      'VALIDATION_ERROR',
    );
    assert.equal(
      code(() => requestedExpiry('soon', NOW)),
      'VALIDATION_ERROR',
    );
  });

  it('lets a Free database live 30 days at most, a Pro one a year', () => {
    const in31 = new Date(NOW + 31 * DAY);
    assert.equal(
      code(() => assertExpiryWithinTier('free', in31, NOW)),
      'QUOTA_EXCEEDED',
    );
    assert.equal(
      code(() => assertExpiryWithinTier(undefined, in31, NOW)),
      'QUOTA_EXCEEDED',
    );
    assert.equal(
      code(() => assertExpiryWithinTier('pro', in31, NOW)),
      'none',
    );
    assert.equal(
      code(() => assertExpiryWithinTier('free', new Date(NOW + 30 * DAY), NOW)),
      'none',
    );
    assert.equal(
      code(() => assertExpiryWithinTier('free', null, NOW)),
      'none',
    );
  });
});
