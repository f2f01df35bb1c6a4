import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  USER_CODE_ALPHABET,
  formatUserCode,
  generateAccessToken,
  generateDeviceCode,
  generateUserCode,
  looksLikeAccessToken,
  normalizeUserCode,
  sha256,
} from './codes.js';

describe('device flow codes', () => {
  it('device codes carry at least 32 random bytes in base64url', () => {
    const code = generateDeviceCode();
    assert.match(code, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(Buffer.from(code, 'base64url').length >= 32);
    assert.notEqual(code, generateDeviceCode());
  });

  it('user codes use only the consonant alphabet and read as XXXX-XXXX', () => {
    for (let i = 0; i < 200; i++) {
      const code = generateUserCode();
      assert.equal(code.length, 8);
      assert.ok(
        [...code].every((c) => USER_CODE_ALPHABET.includes(c)),
        code,
      );
    }
    assert.equal(formatUserCode('BCDFGHJK'), 'BCDF-GHJK');
  });

  it('user codes compare case-insensitively without the dash', () => {
    assert.equal(normalizeUserCode('bcdf-ghjk'), 'BCDFGHJK');
    assert.equal(normalizeUserCode(' BCDF GHJK '), 'BCDFGHJK');
    assert.equal(normalizeUserCode('ABCD-EFGH'), null, 'vowels are not in the alphabet');
    assert.equal(normalizeUserCode('BCDF-GHJ'), null);
  });

  it('access tokens are pgc_ and 40 base62 characters', () => {
    const token = generateAccessToken();
    assert.ok(looksLikeAccessToken(token), token);
    assert.equal(looksLikeAccessToken('pgc_short'), false);
    assert.equal(sha256(token).length, 64);
    assert.notEqual(sha256(token), token);
  });
});
