import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { requestedExpiry } from './lifetime.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const DAY = 86_400_000;

function refusal(body: Parameters<typeof requestedExpiry>[0]): string {
  try {
    requestedExpiry(body, NOW);
  } catch (err) {
    assert.ok(err instanceof DomainError);
    assert.equal(err.code, 'VALIDATION_ERROR');
    return err.details?.[0]?.message ?? '';
  }
  assert.fail('not refused');
}

describe('a local database’s requested expiry', () => {
  it('comes from ttlSeconds or expiresAt, null for never, undefined when not asked', () => {
    assert.equal(requestedExpiry({ ttlSeconds: 3 }, NOW)?.getTime(), NOW + 3000);
    const at = '2026-12-01T00:00:00Z';
    assert.equal(requestedExpiry({ expiresAt: at }, NOW)?.getTime(), Date.parse(at));
    assert.equal(requestedExpiry({ expiresAt: null }, NOW), null);
    assert.equal(requestedExpiry({}, NOW), undefined);
  });

  it('is in the future, at most 30 days ahead, and asked one way', () => {
    assert.match(refusal({ expiresAt: new Date(NOW).toISOString() }), /in the future/);
    assert.match(refusal({ expiresAt: new Date(NOW + 31 * DAY).toISOString() }), /30 days/);
    assert.match(refusal({ expiresAt: '2026-12-01T00:00:00Z', ttlSeconds: 5 }), /not both/);
  });
});
