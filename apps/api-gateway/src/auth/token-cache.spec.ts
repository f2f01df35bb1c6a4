import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { AuthenticatedUser } from '@pgcloud/contracts';
import type { GatewayConfig } from '../config.js';
import { TokenCache } from './token-cache.js';

const user = { id: 'user_a', token_id: 'tok_a', tier: 'free' } as AuthenticatedUser;

function cacheWith(seconds: number): TokenCache {
  return new TokenCache({ AUTH_CACHE_SECONDS: seconds } as GatewayConfig);
}

describe('TokenCache', () => {
  it('trusts a user for AUTH_CACHE_SECONDS, and knows the token valid for an hour', () => {
    mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    try {
      const cache = cacheWith(5);
      cache.set('pgc_a', user);
      assert.equal(cache.get('pgc_a'), user);
      mock.timers.tick(5_001);
      assert.equal(cache.get('pgc_a'), undefined, 'asked again after 5 s');
      assert.equal(cache.isKnownValid('pgc_a'), true, 'still not charged to the IP');
      mock.timers.tick(60 * 60 * 1000);
      assert.equal(cache.isKnownValid('pgc_a'), false);
    } finally {
      mock.timers.reset();
    }
  });

  it('with AUTH_CACHE_SECONDS=0 always asks, but still knows the token', () => {
    const cache = cacheWith(0);
    cache.set('pgc_a', user);
    assert.equal(cache.get('pgc_a'), undefined);
    assert.equal(cache.isKnownValid('pgc_a'), true);
  });

  it('forgets a refused token, and every token of a logout', () => {
    const cache = cacheWith(5);
    cache.set('pgc_a', user);
    cache.set('pgc_b', { ...user, token_id: 'tok_b' });
    cache.forget('pgc_a');
    assert.equal(cache.isKnownValid('pgc_a'), false);
    cache.forgetTokenId('tok_b');
    assert.equal(cache.isKnownValid('pgc_b'), false);
    assert.equal(cache.isKnownValid('pgc_never'), false);
  });
});
